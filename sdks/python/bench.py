"""Engine overhead of the Python SDK per call, the TypeScript bench's measurement (bench/sdk.ts) in Python:
tokenise + attest (what RelayClient does before sending) + detokenise the answer, on the same ~2 KB prompt with 5
identifiers (a name, an e-mail, a phone, an IBAN, a card); p50 of BENCH_RUNS (default 200) after 20 warm-up calls.
Target: names off <= 3 ms p50. Also reported: the built-in (portable) name model, and streaming detokenisation per
SSE chunk. Prints a table and writes bench/results/python-engine-latest.{json,md}.

    /usr/bin/python3 sdks/python/bench.py
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE / "src"))

from privacy_relay.engine import Engine, name_model_of  # noqa: E402
from privacy_relay.sse import SseDetokeniser, detokenise_response_text  # noqa: E402
from privacy_relay.wire.ecdsa import SigningKey  # noqa: E402

KB = 1024
FILLER = (
    "The quarterly review covered the budget for the northern office, the delays in the shipment of spare parts, and the plan "
    "to move the support team to the new ticketing system before the end of the year. "
)
IDENTIFIERS = (
    "Please ask Maria Garcia to write to maria.garcia@example.com, call +44 20 7946 0958, refund IBAN GB82 WEST 1234 5698 7654 32 "
    "and cancel card 4111 1111 1111 1111. "
)
PROMPT = IDENTIFIERS
while len(PROMPT) + len(FILLER) <= 2 * KB:
    PROMPT += FILLER

KEY = SigningKey.generate()


def engine_with(names: str) -> Engine:
    return Engine(names=name_model_of(names), device_key=lambda: KEY)


def engine_call(engine: Engine) -> tuple[float, float, int]:
    started = time.perf_counter()
    cpu_started = time.thread_time()
    prepared = engine.prepare("chat.completions", {"model": "local-chat", "messages": [{"role": "user", "content": PROMPT}]})
    content = prepared.tokenised_body["messages"][0]["content"]
    answer = json.dumps({"id": "chatcmpl-bench", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": f"Echo: {content}"}, "finish_reason": "stop"}]})
    restored = detokenise_response_text(answer, prepared.map)
    ms = (time.perf_counter() - started) * 1000
    cpu_ms = (time.thread_time() - cpu_started) * 1000
    if PROMPT[:40] not in restored:
        raise SystemExit("detokenisation did not restore the prompt")
    return ms, cpu_ms, len(prepared.map)


def p50(engine: Engine, runs: int) -> tuple[float, float, int]:
    """Median wall-clock and median CPU time (this thread) per call: on a shared, loaded machine the wall clock
    includes waiting for a core, the CPU time does not."""
    for _ in range(min(20, runs)):
        engine_call(engine)
    times, cpu_times, values = [], [], 0
    for _ in range(runs):
        ms, cpu_ms, values = engine_call(engine)
        times.append(ms)
        cpu_times.append(cpu_ms)
    return statistics.median(times), statistics.median(cpu_times), values


def streaming_per_chunk() -> float:
    prepared = engine_with("off").prepare("chat.completions", {"model": "local-chat", "stream": True, "messages": [{"role": "user", "content": PROMPT}]})
    answer = "Echo: " + prepared.tokenised_body["messages"][0]["content"]
    frames = [
        "data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": answer[i:i + 4]}, "finish_reason": None}]}) + "\n\n"
        for i in range(0, len(answer), 4)
    ]
    frames.append("data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}) + "\n\ndata: [DONE]\n\n")

    def once() -> float:
        sse = SseDetokeniser("chat.completions", prepared.map)
        text = ""
        started = time.perf_counter()
        for frame in frames:
            for e in sse.push(frame):
                if isinstance(e.json, dict) and e.json.get("choices"):
                    text += e.json["choices"][0]["delta"].get("content") or ""
        for e in sse.end():
            if isinstance(e.json, dict) and e.json.get("choices"):
                text += e.json["choices"][0]["delta"].get("content") or ""
        ms = (time.perf_counter() - started) * 1000
        if "maria.garcia@example.com" not in text:
            raise SystemExit("the stream was not detokenised")
        return ms / len(frames)

    for _ in range(20):
        once()
    return statistics.median(once() for _ in range(100))


def _target(row: dict) -> str:
    if row["target"] is None:
        return ""
    return f"<= {row['target']} {row['unit']}: {'PASS' if row['pass'] else 'FAIL'}"


def main() -> None:
    runs = int(os.environ.get("BENCH_RUNS", "200"))
    load = os.getloadavg()
    names_off, names_off_cpu, values_off = p50(engine_with("off"), runs)
    names_on, names_on_cpu, values_on = p50(engine_with("builtin"), runs)
    per_chunk = streaming_per_chunk()
    rows = [
        {"what": "2 KB prompt, 5 identifiers, names off: tokenise+attest+detokenise p50", "value": round(names_off, 3), "unit": "ms", "target": 3, "pass": names_off <= 3},
        {"what": "same, CPU time per call p50 (names off)", "value": round(names_off_cpu, 3), "unit": "ms", "target": 3, "pass": names_off_cpu <= 3},
        {"what": "2 KB prompt, 5 identifiers, built-in names (portable name model): p50", "value": round(names_on, 3), "unit": "ms", "target": None, "pass": None},
        {"what": "same, CPU time per call p50 (built-in names)", "value": round(names_on_cpu, 3), "unit": "ms", "target": None, "pass": None},
        {"what": "streaming detokenisation per SSE chunk (4-character deltas)", "value": round(per_chunk, 4), "unit": "ms", "target": None, "pass": None},
    ]
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = ""
    result = {
        "bench": "python-engine",
        "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "commit": commit,
        "python": sys.version.split()[0],
        "runs": runs,
        "load_average": [round(x, 1) for x in load],
        "prompt_bytes": len(PROMPT.encode()),
        "values_replaced": {"names_off": values_off, "names_on": values_on},
        "results": rows,
    }
    for row in rows:
        verdict = "" if row["pass"] is None else ("PASS" if row["pass"] else "FAIL")
        print(f"{row['what']}: {row['value']} {row['unit']}" + (f" (target {row['target']} {row['unit']}: {verdict})" if row["target"] is not None else ""))
    print(f"load average {' '.join(f'{x:.1f}' for x in load)} on {os.cpu_count()} cores; {runs} runs")
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "python-engine-latest.json").write_text(json.dumps(result, indent=2) + "\n", "utf-8")
    md = [
        "# Python SDK engine overhead (sdks/python/bench.py)",
        "",
        f"{result['at']}, commit {commit}, Python {result['python']}, {runs} runs, load average {' '.join(f'{x:.1f}' for x in load)} on {os.cpu_count()} cores (shared machine: numbers are noisy).",
        f"Prompt: {result['prompt_bytes']} bytes with a name, an e-mail, a phone, an IBAN and a card; values replaced: names off {values_off}, built-in names {values_on}.",
        "",
        "| measurement | value | target |",
        "|---|---|---|",
        *[f"| {r['what']} | {r['value']} {r['unit']} | {_target(r)} |" for r in rows],
        "",
    ]
    (out / "python-engine-latest.md").write_text("\n".join(md), "utf-8")


if __name__ == "__main__":
    main()
