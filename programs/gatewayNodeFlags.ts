/**
 * The Node flags the gateway is started with, wherever it is started: deploy/Dockerfile, deploy/systemd,
 * deploy/kubernetes, package.json's `gateway` and `start` scripts and the benchmark (bench/run.ts imports this list).
 * test/programs/gatewayNodeFlags.test.ts keeps the copies in step. They are V8 heap settings, which V8 reads only
 * when the process starts (v8.setFlagsFromString is too late for them).
 *
 * `--max-semi-space-size=8`: V8 sizes the young generation from the machine's memory (32 MiB semi-spaces on a
 * 24 GB machine), and under load the gateway kept ~110 MiB of it resident. With 16 MiB: gateway peak RSS under
 * `BENCH_QUICK=1 npm run bench` on PostgreSQL+Redis 386 -> 245 MiB in back-to-back runs, gateway CPU per call at
 * c=16 1.74 -> 1.53 ms (no cost measurable on a shared machine). With 8 MiB, two pairs of runs at a later, faster
 * main: 342/318 MiB (16) -> 305/304 MiB (8), CPU per call at c=16 1.08/1.01 -> 1.19/0.97 ms. docs/decisions.md.
 *
 * `--heap-growing-percent=50`: after each full collection V8 lets the old generation grow by a factor it picks from
 * its GC speed, up to 4x, and under the c=64 phases of a full bench that garbage took the gateway to ~500 MiB (live
 * heap ~70 MiB). Growing by 1.5x collects sooner. One-round PostgreSQL+Redis benches (3 s phases, c=1/16/64, no
 * proxy) on a quiet machine, gateway peak RSS and CPU per call at c=16: without it 470/465 MiB, 0.81/0.78 ms; with
 * 50: 263/270 MiB, 0.85/0.79 ms; with 25: 251 MiB, 1.02 ms; `--memory-saver-mode` instead: 218 MiB, 1.81 ms.
 */
export const GATEWAY_NODE_FLAGS: ReadonlyArray<string> = ["--max-semi-space-size=8", "--heap-growing-percent=50"]
