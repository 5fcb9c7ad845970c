// Package launch lets fsbench be started by the launchers of HPC sites and
// batch systems (mpirun, srun, Kubernetes Indexed Jobs) without linking an
// MPI library: each process reads its rank and the world size from the
// launcher's environment, and the ranks find each other through a
// rendezvous directory on the file system under test.
//
// It links no MPI library and starts no process: the launcher starts the
// ranks, and this package only reads their environment and meets in the
// rendezvous directory.
package launch

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Launcher names, as --launcher takes them.
const (
	None  = "none"  // a plain run: the environment is not looked at
	Auto  = "auto"  // whichever launcher's environment is there
	MPI   = "mpi"   // Open MPI, PMIx or PMI (mpirun, mpiexec)
	Slurm = "slurm" // srun
	K8s   = "k8s"   // a Kubernetes Indexed Job
)

// Kinds are the values --launcher takes.
var Kinds = []string{Auto, None, MPI, Slurm, K8s}

// RunIDEnv names the variable that gives every rank the same run id when
// the launcher's environment has none (Kubernetes, MPICH's mpiexec), and
// SizeEnv the one that gives the world size of a Kubernetes Indexed Job.
const (
	RunIDEnv = "FSBENCH_RUN_ID"
	SizeEnv  = "FSBENCH_WORLD_SIZE"
)

// Env is this process's place in a launched run.
type Env struct {
	Kind  string // MPI, Slurm or K8s
	Rank  int    // 0 coordinates
	Size  int    // the world size, at least 2
	RunID string // the same on every rank; names the rendezvous
	// From names the variables rank and size were read from, for errors.
	From string
}

// Detect reads this process's rank and the world size for the launcher
// kind from getenv; size, if above 0, is the world size given on the
// command line (--world-size). It reports false for a plain run: kind
// none, kind auto without a launcher's environment, or a world of one
// process. An explicit kind whose environment is missing or malformed is
// an error, as is a malformed one under auto.
func Detect(kind string, getenv func(string) string, size int) (Env, bool, error) {
	var e Env
	var ok bool
	var err error
	switch kind {
	case None, "":
		return Env{}, false, nil
	case MPI:
		e, ok, err = detectMPI(getenv, size, true)
	case Slurm:
		e, ok, err = detectSlurm(getenv, size, true)
	case K8s:
		e, ok, err = detectK8s(getenv, size, true)
	case Auto:
		for _, d := range []func(func(string) string, int, bool) (Env, bool, error){detectMPI, detectSlurm, detectK8s} {
			if e, ok, err = d(getenv, size, false); ok || err != nil {
				break
			}
		}
	default:
		return Env{}, false, fmt.Errorf("--launcher %q: want one of %s", kind, strings.Join(Kinds, ", "))
	}
	if err != nil || !ok || e.Size == 1 {
		return Env{}, false, err
	}
	if id := getenv(RunIDEnv); id != "" {
		e.RunID = id
	}
	if e.RunID == "" {
		return Env{}, false, fmt.Errorf("rank %d of %d (%s): no run id in the environment: set %s to one value for every rank (the job's id)", e.Rank, e.Size, e.From, RunIDEnv)
	}
	e.RunID = safeID(e.RunID)
	return e, true, nil
}

// first returns the first of names set in the environment, and its value.
func first(getenv func(string) string, names ...string) (string, string) {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return n, v
		}
	}
	return "", ""
}

// place parses a rank and a size read from the named variables (sizeFrom
// "" when the size came from --world-size).
func place(kind, rankFrom, rank, sizeFrom string, size int, sizeText string) (Env, error) {
	e := Env{Kind: kind, From: rankFrom}
	r, err := strconv.Atoi(strings.TrimSpace(rank))
	if err != nil || r < 0 {
		return Env{}, fmt.Errorf("%s=%q is not a rank", rankFrom, rank)
	}
	if sizeFrom != "" {
		e.From += ", " + sizeFrom
		if size, err = strconv.Atoi(strings.TrimSpace(sizeText)); err != nil || size < 1 {
			return Env{}, fmt.Errorf("%s=%q is not a world size", sizeFrom, sizeText)
		}
	} else {
		e.From += ", --world-size"
	}
	if r >= size {
		return Env{}, fmt.Errorf("rank %d (%s) is not below the world size %d", r, rankFrom, size)
	}
	e.Rank, e.Size = r, size
	return e, nil
}

// detectMPI reads Open MPI's variables, else PMIx's or PMI's rank with a
// size from PMI_SIZE or --world-size.
func detectMPI(getenv func(string) string, size int, explicit bool) (Env, bool, error) {
	rankFrom, rank := first(getenv, "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK")
	if rankFrom == "" {
		if explicit {
			return Env{}, false, fmt.Errorf("--launcher mpi: no rank in the environment (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK): is fsbench started by mpirun?")
		}
		return Env{}, false, nil
	}
	sizeFrom, sizeText := first(getenv, "OMPI_COMM_WORLD_SIZE", "PMI_SIZE")
	if sizeFrom == "" && size == 0 {
		if explicit {
			return Env{}, false, fmt.Errorf("--launcher mpi: %s is set but no world size (OMPI_COMM_WORLD_SIZE, PMI_SIZE): give --world-size", rankFrom)
		}
		return Env{}, false, nil // srun's PMIx, say: Slurm's variables tell
	}
	if size > 0 {
		sizeFrom = ""
	}
	e, err := place(MPI, rankFrom, rank, sizeFrom, size, sizeText)
	_, e.RunID = first(getenv, "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE")
	if e.RunID != "" {
		e.RunID = "mpi-" + e.RunID
	}
	return e, err == nil, err
}

// detectSlurm reads the variables srun gives each task of a job step.
// Under auto only a job step counts (SLURM_STEP_ID is set): a batch
// script has SLURM_PROCID too, and a plain run there is one process.
func detectSlurm(getenv func(string) string, size int, explicit bool) (Env, bool, error) {
	_, step := first(getenv, "SLURM_STEP_ID", "SLURM_STEPID")
	rank := getenv("SLURM_PROCID")
	if rank == "" || (step == "" && !explicit) {
		if explicit {
			return Env{}, false, fmt.Errorf("--launcher slurm: SLURM_PROCID is not set: is fsbench started by srun?")
		}
		return Env{}, false, nil
	}
	sizeFrom, sizeText := first(getenv, "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_NPROCS")
	if sizeFrom == "" && size == 0 {
		return Env{}, false, fmt.Errorf("SLURM_PROCID is set but no task count (SLURM_STEP_NUM_TASKS, SLURM_NTASKS): give --world-size")
	}
	if size > 0 {
		sizeFrom = ""
	}
	e, err := place(Slurm, "SLURM_PROCID", rank, sizeFrom, size, sizeText)
	if job := getenv("SLURM_JOB_ID"); job != "" {
		e.RunID = "slurm-" + job + "." + step
	}
	return e, err == nil, err
}

// detectK8s reads a Kubernetes Indexed Job's JOB_COMPLETION_INDEX; the
// world size (the Job's completions) comes from --world-size or
// FSBENCH_WORLD_SIZE, the run id from FSBENCH_RUN_ID.
func detectK8s(getenv func(string) string, size int, explicit bool) (Env, bool, error) {
	index := getenv("JOB_COMPLETION_INDEX")
	sizeText := getenv(SizeEnv)
	if index == "" || (size == 0 && sizeText == "") {
		if !explicit {
			return Env{}, false, nil
		}
		if index == "" {
			return Env{}, false, fmt.Errorf("--launcher k8s: JOB_COMPLETION_INDEX is not set: is fsbench a pod of an Indexed Job?")
		}
		return Env{}, false, fmt.Errorf("--launcher k8s: the world size is not known: give --world-size or set %s (the Job's completions)", SizeEnv)
	}
	sizeFrom := SizeEnv
	if size > 0 {
		sizeFrom = ""
	}
	e, err := place(K8s, "JOB_COMPLETION_INDEX", index, sizeFrom, size, sizeText)
	return e, err == nil, err
}

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// safeID makes a run id a file name: kept as it is when it is one, else
// its readable part and a hash of it all.
func safeID(id string) string {
	clean := unsafeID.ReplaceAllString(id, "_")
	if clean == id && len(id) <= 64 && !strings.HasPrefix(id, ".") {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	if len(clean) > 40 {
		clean = clean[:40]
	}
	return strings.TrimLeft(clean, ".") + "-" + hex.EncodeToString(sum[:6])
}
