# Sossego — see README.md. Every target works on a fresh machine with Go 1.26.
GO      ?= go
BIN     := bin
GOFLAGS_TEST ?= -race -count=1 -timeout 30m

.PHONY: run test test-short bench check fuzz build cross tools soak stress clean

## run: build and start the demo (central service + simulated gateways) on embedded defaults.
run: build
	./$(BIN)/sossego demo

## build: build both binaries into bin/.
build:
	$(GO) build -o $(BIN)/ ./cmd/...

## tools: build influxd 1.8.10 and staticcheck into .tools/bin (cached).
tools:
	./scripts/tools.sh

## test: every test, with the race detector; integration tests start Mosquitto, InfluxDB, chromium.
test: tools
	$(GO) test $(GOFLAGS_TEST) ./...

## test-short: unit tests only (no real components).
test-short:
	$(GO) test -race -short ./...

## bench: benchmarks; results and method in BENCHMARKS.md.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./...

## soak: the soak (default 1 h; DURATION=24h for the 24-hour goal): loadgen → Mosquitto (restarted) → central → SQLite + InfluxDB (killed).
soak: tools
	./scripts/soak.sh

## stress: every package's tests with -race, COUNT=5 times each, while HOGS=2 busy loops take the CPUs.
stress: tools
	./scripts/stress.sh

## fuzz: run each fuzz target briefly.
fuzz:
	./scripts/fuzz.sh 10s

## check: gofmt, go vet, staticcheck, go mod tidy without diff.
check: tools
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt: run gofmt -w on the files above'; exit 1; }
	$(GO) vet ./...
	./.tools/bin/staticcheck ./...
	$(GO) mod tidy && git diff --exit-code go.mod go.sum

## cross: the gateway for Raspberry Pi (arm64, armv6, armv7; CGO off, no paths or symbols) and a 32-bit build of everything.
GATEWAY_BUILD := -trimpath -ldflags='-s -w'
cross:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build $(GATEWAY_BUILD) -o $(BIN)/linux-arm64/ ./cmd/sossego-gateway
	CGO_ENABLED=0 GOOS=linux GOARCH=arm GOARM=6 $(GO) build $(GATEWAY_BUILD) -o $(BIN)/linux-armv6/ ./cmd/sossego-gateway
	CGO_ENABLED=0 GOOS=linux GOARCH=arm GOARM=7 $(GO) build $(GATEWAY_BUILD) -o $(BIN)/linux-armv7/ ./cmd/sossego-gateway
	CGO_ENABLED=0 GOOS=linux GOARCH=386 $(GO) build ./...

clean:
	rm -rf $(BIN)
