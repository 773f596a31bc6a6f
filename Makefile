# heed: `make test` is what CI runs; `make bench` compares heed with its peers on this CPU.

GO ?= go
# ISAs the native run must exercise. CI runs on an AVX-512 machine and requires all three.
NATIVE_ISAS ?= $(if $(CI),generic$(comma)avx2$(comma)avx512,generic)
QEMU_X86 := qemu-x86_64 -cpu Haswell
QEMU_ARM := qemu-aarch64

.PHONY: all generate test vet test-race test-native test-purego test-emulated test-arm64 test-haswell test-generated test-bench test-mingo test-gonumblas bench bench-full bench-cgo bench-all bench-ab fuzz

all: test

generate:
	cd asmgen && $(GO) run ./fit && $(GO) run .

# The steps run in three groups, one after another: the native ones, the two
# emulated ones, the rest. Within a group they run side by side (-j2, each
# one's output kept whole, -O), so that one step's single long package does
# not leave a core idle; a failure stops make after the group.
test:
	$(MAKE) --no-print-directory -j2 -O vet test-native test-purego
	$(MAKE) --no-print-directory test-emulated
	$(MAKE) --no-print-directory -j2 -O test-generated test-bench test-mingo test-gonumblas test-race

vet:
	$(GO) vet ./...
	GOARCH=arm64 $(GO) vet ./...
	$(GO) vet -tags purego ./...
	cd asmgen && $(GO) vet ./...
	cd bench && $(GO) vet ./...
	cd gonumblas && $(GO) vet ./... && GOARCH=arm64 $(GO) vet ./... && $(GO) vet -tags purego ./...

test-native:
	HEED_REQUIRE_ISA=$(NATIVE_ISAS) $(GO) test ./...

test-purego:
	HEED_REQUIRE_ISA=generic $(GO) test -tags purego ./...

# qemu steps: skipped with a message where qemu is missing, a failure under CI.
# Emulation is slow, so they get a longer per-package timeout than go test's 10m,
# and -short: tests whose inputs only repeat what the native run checks take
# fewer shapes there (each says so where it reads testing.Short).
define need
	@if ! command -v $(1) >/dev/null; then \
		if [ -n "$(CI)" ]; then echo "FAIL: $(1) not installed (CI requires it)"; exit 1; fi; \
		echo "SKIP: $(1) not installed; $(2) not run (apt-get install qemu-user)"; exit 0; \
	fi; \
	echo '$(3)'; $(3)
endef

# The two qemu steps run side by side (each one's output kept whole, -O): each
# is bound by one package's single emulated process, so one alone leaves a
# core idle most of its time.
test-emulated:
	$(MAKE) --no-print-directory -j2 -O test-arm64 test-haswell

# attention and rnn run their suites under NEON only there, beside the other
# packages: their own code is the same Go under every ISA, and the generic
# kernels compiled for arm64 are kernels' to check (which runs both).
ARM_TEST = GOARCH=arm64 HEED_REQUIRE_ISA=$(ARM_ISAS) HEED_TEST_EXEC=$(QEMU_ARM) $(GO) test -short -timeout 40m -exec $(QEMU_ARM)
test-arm64:
	$(call need,$(QEMU_ARM),arm64 tests,$(ARM_TEST) $$($(GO) list ./... | grep -vxE ".*/(attention|rnn)") & HEED_TEST_ISAS=neon $(ARM_TEST) ./attention ./rnn; a=$$?; wait $$!; exit $$(( $$? | a )))

test-haswell:
	$(call need,qemu-x86_64,Haswell (AVX2-only) tests,HEED_REQUIRE_ISA=generic$(comma)avx2 HEED_TEST_ISAS=avx2 HEED_TEST_SPARSE=1 HEED_TEST_EXEC='$(QEMU_X86)' $(GO) test -short -timeout 40m -exec '$(QEMU_X86)' ./... 2>&1 | grep -v '^qemu-x86_64: warning: TCG' ; exit $${PIPESTATUS[0]})

test-generated:
	cd asmgen && $(GO) test ./...

# The oldest Go the core module declares (go.mod's go line): the toolchain comes
# through the module proxy (GOTOOLCHAIN), and the core packages must build and pass with it.
# -short and HEED_TEST_SPARSE: the same tests as test-native, with the fewer
# shapes and trials they take under emulation (test-native has just run them
# all with the current Go; every path a shape selects is kept).
GO_MIN ?= go1.24.11
test-mingo:
	GOWORK=off GOTOOLCHAIN=$(GO_MIN) $(GO) vet ./...
	GOWORK=off GOTOOLCHAIN=$(GO_MIN) HEED_REQUIRE_ISA=$(NATIVE_ISAS) HEED_TEST_SPARSE=1 $(GO) test -short ./...

# The in-use checks that only race builds make (internal/inuse): a Memory,
# Workspace, Batch, HeadCache, Attentional or cell used by two calls at once
# panics. The race detector cannot see the kernels' assembly, so these are
# what -race adds for heed; the rest of the suite runs without it.
test-race:
	$(GO) test -race -run 'InUse|Flag' ./internal/inuse ./attention ./rnn

# bench/'s own tests: every peer computes what heed computes (no timing).
test-bench:
	cd bench && $(GO) test ./...

# gonumblas/ (heed behind gonum's blas.Float32) against gonum itself: every ISA
# here, purego, and arm64 under qemu (in the workspace); then as a consumer
# gets it (.ci/consumer: no workspace, the core module served from HEAD by a
# file GOPROXY), with the oldest Go its go.mod allows.
test-gonumblas:
	cd gonumblas && $(GO) test ./... && $(GO) test -tags purego ./...
	GOTOOLCHAIN=$(GO_MIN) .ci/consumer
	$(call need,$(QEMU_ARM),gonumblas arm64 tests,cd gonumblas && GOARCH=arm64 HEED_TEST_EXEC=$(QEMU_ARM) $(GO) test -timeout 40m -exec $(QEMU_ARM) ./...)

# bench: heed beside the pure-Go peers; bench-cgo adds OpenBLAS and SLEEF
# (apt-get install libopenblas-dev libsleef-dev); bench-all adds go-highway and
# simd/archsimd too (GOEXPERIMENT=simd). Each writes bench/RESULTS.md,
# bench/results.csv, bench/results.svg and bench/results-ratio.svg. bench-full
# runs every size as go test benchmarks for benchstat (BENCH_TAGS=heedcgo,
# BENCH_GOEXPERIMENT=simd add peers). Where OpenBLAS does not know the CPU and
# picks a core below its instruction set, the report and the benchmarks run
# again with OPENBLAS_CORETYPE set to the matching core (bench/openblas.go);
# set OPENBLAS_CORETYPE yourself to choose another.
BENCH_TAGS ?=
BENCH_GOEXPERIMENT ?=
BENCH_COUNT ?= 6
BENCH_TIME ?= 100ms
bench:
	cd bench && $(GO) run ./cmd/report -command 'make bench'

bench-cgo:
	cd bench && OPENBLAS_NUM_THREADS=1 $(GO) run -tags heedcgo ./cmd/report -command 'make bench-cgo'

bench-all:
	cd bench && OPENBLAS_NUM_THREADS=1 GOEXPERIMENT=simd $(GO) run -tags heedcgo ./cmd/report -command 'make bench-all'

bench-full:
	cd bench && OPENBLAS_NUM_THREADS=1 GOEXPERIMENT=$(BENCH_GOEXPERIMENT) $(GO) test -tags '$(BENCH_TAGS)' -run '^$$' -bench . -benchtime $(BENCH_TIME) -count $(BENCH_COUNT) -timeout 0 ./... | tee bench-full.txt

# bench-ab: did a change make a benchmark slower? BASE (a git revision,
# required) against NEW (a revision; default the working tree, uncommitted
# changes included): both versions' test binaries built once, each benchmark
# of the committed suite (bench/cmd/ab/suite.txt; BENCH=<go test -bench
# regex> keeps those it matches, SUITE=none runs BENCH itself) run ROUNDS
# times per version in fresh processes, old and new alternated (ABBA), with
# GOMAXPROCS=PROCS; then benchstat and the rows slower by more than 2% at
# p < 0.05 (CONFIRM=N: only those slower again in N more rounds; FAIL=1:
# exit 1 if any). HEED_ISA and HEED_AVX512_WIDTH reach both versions;
# WIDTHS=256,512 runs everything once per width; OLDAS=old=new1,new2 pairs
# BASE's leaves named with an element old with NEW's named new1, new2 there.
# Outputs go to OUT (default a new directory under $TMPDIR, printed).
# CONTRIBUTING.md has the details.
ROUNDS ?= 10
BENCHTIME ?= 100ms
PROCS ?= 1
bench-ab:
	@if [ -z '$(BASE)' ]; then echo "usage: make bench-ab BASE=<rev> [NEW=<rev>] [BENCH=<regex>] [ROUNDS=10] [BENCHTIME=100ms] [PKGS=...] [WIDTHS=256,512] [PROCS=1] [CONFIRM=20] [FAIL=1] [SUITE=<file>|none] [OUT=<dir>] [OLDAS='avx512=avx512-256,avx512-512']"; exit 2; fi
	cd bench && $(GO) run ./cmd/ab -base '$(BASE)' -new '$(NEW)' -bench '$(value BENCH)' -rounds '$(ROUNDS)' -benchtime '$(BENCHTIME)' -pkgs '$(PKGS)' -widths '$(WIDTHS)' -procs '$(PROCS)' -isa '$(HEED_ISA)' -width '$(HEED_AVX512_WIDTH)' -suite '$(SUITE)' -out '$(OUT)' -old-as '$(OLDAS)' -confirm '$(or $(CONFIRM),0)' $(if $(FAIL),-fail)

# fuzz: every fuzz target of every package, the nested modules' too, one after
# another for FUZZTIME each (go test fuzzes one target per run), listed by
# go test -list; FUZZPARALLEL sets go test's -parallel (default GOMAXPROCS).
# Not part of make test. A failing input is kept under the package's
# testdata/fuzz/<target>/; the targets that failed are listed at the end and
# make fails. A run that ends in "context deadline exceeded" without writing a
# failing input is Go's end-of-fuzztime race (golang/go#75804, fixed in Go
# 1.27), reported but not counted as a failure.
FUZZTIME ?= 1m
FUZZPARALLEL ?=
fuzz:
	@set -o pipefail; failed=; out=$$(mktemp); trap 'rm -f $$out' EXIT; \
	for mod in $$(find . -name go.mod -not -path '*/.*' -not -path '*/testdata/*' -exec dirname {} \; | sort); do \
		list=$$(cd $$mod && $(GO) test -list '^Fuzz' ./... | awk '/^Fuzz/ { t[n++] = $$1; next } /^ok/ { for (i = 0; i < n; i++) print $$2 "," t[i]; n = 0 }') || exit 1; \
		for pt in $$list; do \
			pkg=$${pt%,*}; name=$${pt#*,}; \
			echo "fuzz: $$pkg $$name for $(FUZZTIME)"; \
			(cd $$mod && $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -timeout 0 $(if $(FUZZPARALLEL),-parallel $(FUZZPARALLEL)) $$pkg) 2>&1 | tee $$out; \
			if [ $${PIPESTATUS[0]} -ne 0 ]; then \
				if ! grep -q 'Failing input written' $$out && tail -n 5 $$out | grep -qx '    context deadline exceeded'; then \
					echo "fuzz: $$name: go's end-of-fuzztime race (golang/go#75804), no failing input: not counted"; \
				else \
					failed="$$failed $$pkg.$$name"; \
				fi; \
			fi; \
		done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: failed:$$failed"; exit 1; fi

comma := ,
ARM_ISAS ?= generic,neon
SHELL := /bin/bash
