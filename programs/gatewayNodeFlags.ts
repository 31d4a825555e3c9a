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
 */
export const GATEWAY_NODE_FLAGS: ReadonlyArray<string> = ["--max-semi-space-size=8"]
