package testenv

import (
	"slices"
	"testing"

	"github.com/willscott/go-nfs-client/nfs/rpc"
)

// The test server leaves the portmapper's NFS registrations as it found
// them: another NFS server's (here a made-up one) are back after it stops.
func TestNFSKeepsOtherRegistrations(t *testing.T) {
	ganesha, rpcbind := nfsTools(t)
	lock, err := lockNFS()
	if err != nil {
		t.Fatal(err)
	}
	locked := true
	defer func() {
		if locked {
			unlockNFS(lock)
		}
	}()
	if err := startRPCBind(rpcbind); err != nil {
		t.Fatal(err)
	}
	before, err := portmapDump(nfsPrograms)
	if err != nil {
		t.Fatal(err)
	}
	// A registration of another server, made up unless one is there.
	other := rpc.Mapping{Prog: 100005, Vers: 3, Prot: rpc.IPProtoTCP, Port: 1}
	if len(before) == 0 {
		if err := portmapChange(pmapSet, other); err != nil {
			t.Fatal(err)
		}
		defer portmapChange(pmapUnset, rpc.Mapping{Prog: other.Prog, Vers: other.Vers}) //nolint:errcheck
		before = []rpc.Mapping{other}
	}
	n, err := startNFSLocked(ganesha, rpcbind, lock)
	locked = false // n.Stop or the failed start released it
	if err != nil {
		t.Fatal(err)
	}
	during, _ := portmapDump(nfsPrograms)
	n.Stop()
	after, err := portmapDump(nfsPrograms)
	if err != nil {
		t.Fatal(err)
	}
	sortMappings(before)
	sortMappings(after)
	if !slices.Equal(before, after) {
		t.Errorf("registrations before the server %v, after it %v (while it ran %v)", before, after, during)
	}
}

func sortMappings(m []rpc.Mapping) {
	slices.SortFunc(m, func(a, b rpc.Mapping) int {
		for _, d := range [][2]uint32{{a.Prog, b.Prog}, {a.Vers, b.Vers}, {a.Prot, b.Prot}, {a.Port, b.Port}} {
			if d[0] != d[1] {
				return int(int64(d[0]) - int64(d[1]))
			}
		}
		return 0
	})
}
