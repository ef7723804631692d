# Skirmish — the two commands a newcomer needs are `make run` and `make test`.
#
# Both install the Debian packages they need when they are missing (with sudo when not root), so a fresh machine
# with only the Swift toolchain works. Nothing else installs anything by hand.

SWIFT        ?= swift
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Libraries the package links against (libcurl for the exporter, json-c for JSON payloads).
BUILD_DEPS   := libcurl4-openssl-dev libjson-c-dev pkg-config
FUZZ_RUNS    ?= 2000000
FUZZ_SECONDS ?= 120
# Seconds per fuzzer in `make fuzz-short` (what `make test` runs).
FUZZ_SHORT   ?= 15

# Collectors the telemetry tests start on loopback, and the official OTLP parser they validate payloads with;
# headless Chromium for the page tests (the practice page, the HTML report).
TEST_DEPS    := prometheus prometheus-pushgateway victoria-metrics influxdb chromium
PYTHON       ?= python3
# The network-namespace matrix test: ip netns, veth and tc netem (iproute2), and curl to read the server's metrics.
TEST_DEPS    += iproute2 curl
# The protocol plug-ins' real peers: libenet (a C server the ENet tests build) and DDNet's own server with its maps.
TEST_DEPS    += libenet-dev ddnet-server ddnet-data
# The container test: the runtime image built from scratch with buildah, run with podman (runc copes with the
# hybrid cgroups of a CI container, crun does not); binutils strips the binary the image carries.
TEST_DEPS    += buildah podman runc binutils

.PHONY: run test test-under-load deps test-deps build fuzz fuzz-wire fuzz-script fuzz-enet fuzz-ddnet fuzz-short bench \
	image lint clean

## run: build in release mode and run the quickstart swarm (about 30 s) against the embedded server, print the summary
run: deps
	$(SWIFT) build -c release --product skirmish
	.build/release/skirmish swarm bots/quickstart.yaml

## test: build and run every test (Swift Testing), then lint the formatting and the declared imports
test: deps test-deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --disable-xctest
	$(MAKE) lint
	$(MAKE) fuzz-short

## test-under-load: the test suite three times in a row beside two spinning cores and held memory (a busy CI runner)
test-under-load: deps test-deps
	$(SWIFT) build --build-tests
	RUNS=$${RUNS:-3} .ci/under-load $(SWIFT) test --skip-build --disable-xctest

## image: the runtime image skirmish:latest (buildah), from a release binary with the static Swift runtime
image: deps test-deps
	$(SWIFT) build -c release --static-swift-stdlib --scratch-path .build/static --product skirmish
	deploy/assemble-rootfs.sh .build/static/release/skirmish .build/image
	buildah build --pull=never -f deploy/Containerfile -t skirmish:latest .build/image
	@du -sh .build/image/rootfs | sed 's/\t.*/: the image'"'"'s files/'

## lint: formatting and documented public API (swift-format), and every import declared in Package.swift
lint:
	$(SWIFT) format lint --strict --configuration .ci/swift-format.json --recursive Sources Tests Package.swift
	.ci/check-imports

## deps: install the Debian packages the build needs, only when one is missing
deps:
	@missing=""; for p in $(BUILD_DEPS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

## test-deps: install the collectors, container tools and Python validators the tests use, only when one is missing
test-deps:
	@missing=""; for p in $(TEST_DEPS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@$(PYTHON) -c 'import opentelemetry.proto, google.protobuf' 2>/dev/null || { \
		echo "installing: opentelemetry-proto (pip)"; \
		$(PYTHON) -m pip install -q opentelemetry-proto 2>/dev/null \
			|| $(PYTHON) -m pip install -q --break-system-packages opentelemetry-proto; \
	}
	@$(PYTHON) -c 'import kubernetes_validate' 2>/dev/null || { \
		echo "installing: kubernetes-validate (pip)"; \
		$(PYTHON) -m pip install -q kubernetes-validate 2>/dev/null \
			|| $(PYTHON) -m pip install -q --break-system-packages kubernetes-validate; \
	}

## fuzz: run the libFuzzer targets (SNAP packets, scripts, ENet datagrams, DDNet decoders), bounded in runs and time
fuzz: fuzz-wire fuzz-script fuzz-enet fuzz-ddnet

## fuzz-short: every fuzzer for FUZZ_SHORT seconds, the pass `make test` runs
fuzz-short:
	$(MAKE) fuzz FUZZ_SECONDS=$(FUZZ_SHORT)

fuzz-wire:
	mkdir -p .build/fuzz
	$(SWIFT)c -O -sanitize=fuzzer,address -parse-as-library -module-name SkirmishWire -package-name skirmish \
		Sources/SkirmishWire/*.swift Sources/SkirmishWire/Messages/*.swift Tests/Fuzz/WireFuzz.swift \
		-o .build/fuzz/wire-fuzz
	mkdir -p .build/fuzz/wire-corpus
	.build/fuzz/wire-fuzz -runs=$(FUZZ_RUNS) -max_total_time=$(FUZZ_SECONDS) -max_len=1300 \
		-print_final_stats=1 .build/fuzz/wire-corpus

# The DDNet plug-in's decoders (Huffman, packet and chunk headers, varints, snapshot deltas) import only the standard
# library, so they compile alone with the fuzz entry point.
fuzz-ddnet:
	mkdir -p .build/fuzz
	$(SWIFT)c -O -sanitize=fuzzer,address -parse-as-library -module-name SkirmishDDNet -package-name skirmish \
		Sources/SkirmishDDNet/Codec/*.swift Tests/Fuzz/DDNetFuzz.swift -o .build/fuzz/ddnet-fuzz
	mkdir -p .build/fuzz/ddnet-corpus
	.build/fuzz/ddnet-fuzz -runs=$(FUZZ_RUNS) -max_total_time=$(FUZZ_SECONDS) -max_len=2048 \
		-print_final_stats=1 .build/fuzz/ddnet-corpus

# The ENet plug-in's datagram reader and writer import only the standard library, so they compile alone with the
# fuzz entry point, as the wire codec does.
fuzz-enet:
	mkdir -p .build/fuzz
	$(SWIFT)c -O -sanitize=fuzzer,address -parse-as-library -module-name SkirmishENet -package-name skirmish \
		Sources/SkirmishENet/Wire/*.swift Tests/Fuzz/ENetFuzz.swift -o .build/fuzz/enet-fuzz
	mkdir -p .build/fuzz/enet-corpus
	.build/fuzz/enet-fuzz -runs=$(FUZZ_RUNS) -max_total_time=$(FUZZ_SECONDS) -max_len=4200 \
		-print_final_stats=1 .build/fuzz/enet-corpus

# The script loader needs Yams (with its C parser), so it is built by a fuzz-only package that depends on this
# package's SkirmishScript library, with every target instrumented; the shipped scripts seed the corpus.
fuzz-script:
	$(SWIFT) build --package-path Tests/Fuzz/ScriptFuzz --scratch-path .build/fuzz/script \
		--sanitize fuzzer --sanitize address
	mkdir -p .build/fuzz/script-corpus
	cp bots/*.yaml .build/fuzz/script-corpus/
	.build/fuzz/script/debug/ScriptFuzz -runs=$(FUZZ_RUNS) -max_total_time=$(FUZZ_SECONDS) -max_len=8192 \
		-rss_limit_mb=2048 -timeout=10 -print_final_stats=1 .build/fuzz/script-corpus

## bench: build in release mode and run every benchmark (about 6 minutes; run it on an otherwise idle machine)
bench: deps
	$(SWIFT) build -c release --product skirmish
	.build/release/skirmish bench codec
	.build/release/skirmish bench games
	.build/release/skirmish bench opponent
	.build/release/skirmish bench export
	.build/release/skirmish bench net
	.build/release/skirmish bench server
	.build/release/skirmish bench swarm

clean:
	rm -rf .build
