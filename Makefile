# fsbench build, test and benchmark targets.
GO        ?= go
BIN       ?= bin/fsbench
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X github.com/fsbench/fsbench/internal/cli.Version=$(VERSION)
PKGS      := ./...
TEST_TIMEOUT ?= 60m
# The container image: IMAGE:VERSION in the local podman store and an OCI
# archive to load elsewhere. podman runs through internal/testenv/podman.sh.
IMAGE     ?= localhost/fsbench
IMAGE_ARCHIVE ?= bin/fsbench-image-$(VERSION).tar
IMAGE_BIN ?= bin/image/fsbench
PODMAN    ?= bash internal/testenv/podman.sh

FUZZTIME  ?= 3s

.PHONY: all build image test test-deps unit lint fuzz bench bench-compare bench-fio dlio-compare dlio-s3-compare demo clean docs

all: build

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/fsbench

# A static binary (no libc in the image) for the image's architecture
# (GOARCH), then the image built from it; see docs/container.md.
image:
	CGO_ENABLED=0 $(MAKE) --no-print-directory build BIN=$(IMAGE_BIN)
	PODMAN='$(PODMAN)' ARCH="$$($(GO) env GOARCH)" REVISION="$$(git rev-parse HEAD 2>/dev/null)" \
	  TIMESTAMP="$$(git log -1 --format=%ct 2>/dev/null)" \
	  bash deploy/image.sh $(IMAGE_BIN) $(VERSION) $(IMAGE) $(IMAGE_ARCHIVE)

# The whole suite, with the real servers and mounts it needs installed first,
# then every fuzz target for a bounded time.
test: test-deps lint
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(PKGS)
	$(GO) test -race -count=1 -run 'Cancel' ./pkg/object/
	$(MAKE) fuzz

# Every fuzz target (func FuzzX in a _test.go file) for FUZZTIME each, about
# two minutes in all: no input of a parser of user input may panic.
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) bash internal/testenv/fuzz.sh

# Installs bindfs, fio, nfs-ganesha, rpcbind, podman, runc, a MinIO server and
# kubernetes-validate (idempotent).
test-deps:
	bash internal/testenv/install.sh

# The command reference (docs/reference, markdown; docs/man, man pages),
# generated from the commands' flags and help. A test fails when it is stale.
docs:
	$(GO) run ./internal/cli/docgen docs

# Tests that need nothing but Go: under -short, every test that would start
# a server (MinIO, nfs-ganesha), a FUSE daemon, podman, agents in network
# namespaces or a browser skips and says which (testenv.NeedsServer).
unit:
	@echo "unit tests: no servers; tests that need MinIO, nfs-ganesha, bindfs, podman, agents or Chromium are skipped (make test runs them)"
	$(GO) test -count=1 -short $(PKGS)

# gofmt, go vet, and go.mod/go.sum as go mod tidy leaves them: -diff prints
# what tidy would change (a module required and imported nowhere, one
# imported and not required) and fails, changing nothing.
lint:
	@out="$$(gofmt -l cmd internal pkg)"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) mod tidy -diff

# fsbench's own speed: Go benchmarks of its hot paths.
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# fsbench beside fio on the same jobs, on DIR (default: a temporary directory).
bench-compare: build
	bash benchmarks/scripts/bench-compare.sh $(DIR)

# The peers of the speed scripts: warp and juicefs built from their released
# sources (the module proxy's) into ~/.cache/fsbench-test/bin. Not needed by
# the tests; juicefs takes minutes to build.
.PHONY: peers
peers:
	bash benchmarks/scripts/install-peers.sh

# fsbench objbench beside MinIO's warp (from PATH or WARP=path) on the same S3
# operations against a local MinIO: medians of RUNS alternating pairs,
# throughput and peak memory with ratios. DURATION, THREADS, SMALL, MEDIUM,
# BIG; see benchmarks/records/object-peers.md.
.PHONY: bench-peers
bench-peers: build
	bash benchmarks/scripts/bench-peers.sh

# fsbench objbench's JuiceFS-style items against a local MinIO and a local
# nfs-ganesha (root), medians of RUNS runs beside juicefs objbench on the same
# job (JUICEFS=path, or `make peers`), else beside its figures on the same
# machine class. TARGETS, PROFILE_DIR; see benchmarks/records/object-peers.md.
.PHONY: bench-items
bench-items: build
	bash benchmarks/scripts/bench-items.sh

# fio and fsbench workloads on the same jobs (seq/random, 4 KiB/1 MiB,
# buffered/O_DIRECT): IOPS, MiB/s, mean latency and ratios. SIZE, JOBS, RUNS.
bench-fio: build
	bash benchmarks/scripts/fio-compare.sh $(DIR)

# MLPerf Storage's DLIO and `fsbench train` on the same resnet50 workload on a
# tmpfs (root): AU, peak RSS and CPU seconds per accelerator count and layout.
# DLIO_VENV is a Python venv with dlio-benchmark; see docs/training.md.
dlio-compare: build
	DLIO_VENV='$(DLIO_VENV)' bash benchmarks/scripts/dlio-compare.sh

# DLIO's object-store reader (s3torchconnector) and `fsbench train --storage
# minio` on the same unet3d and resnet50 datasets in one local MinIO: AU,
# client CPU seconds, peak RSS per accelerator count, PAIRS runs alternated.
# DLIO_VENV is a venv with DLIO's source and s3torchconnector; see docs/training.md.
dlio-s3-compare: build
	DLIO_VENV='$(DLIO_VENV)' bash benchmarks/scripts/dlio-s3-compare.sh

# The main job on an embedded default: bench on a temporary local directory.
demo: build
	@d="$$(mktemp -d)"; trap 'rm -rf "$$d"' EXIT; ./$(BIN) bench "$$d" -p 4 --big-file-size 256M

clean:
	rm -rf bin
