#!/usr/bin/env python3
"""Judges a soak (perf/soak.sh): outcomes, RSS and fds flat after warm-up, no latency drift.

Writes OUT/minutes.csv (per run and minute, or 10 s in runs under half an hour: events accepted, median and max of the per-second
p99 outside fault windows), OUT/summary.json and OUT/soak.svg (RSS, fds and p99 over time), and
exits 0 only when every check holds.
  soak_judge.py OUT A_REPORT B_REPORT RC_A RC_B WARMUP DURATION
"""
import csv
import json
import os
import statistics
import sys

FLAT = 0.05  # RSS and fds within ±5 % of the level at the end of the warm-up
DRIFT_RATIO, DRIFT_MS = 2.0, 5.0  # late p99 at most max(2x, +5 ms) of early p99


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"_error": str(e)}


def fault_seconds(r):
    """The seconds of each fault's window as the report judged it (the same window its
    latency outside faults leaves out): from the second it began to the one it recovered in,
    to the end when it did not recover."""
    out = set()
    end = len(r.get("timeline", []))
    for a in (r.get("faults") or {}).get("actions", []):
        if a.get("began_s") is not None:
            to = a.get("recovered_t")
            out.update(range(int(a["began_s"]), (end if to is None else to) + 1))
    return out


def minutes(r, warmup, bucket):
    """Per bucket (a minute; 10 s in runs under half an hour) after warm-up: accepted events
    and the per-second p99s outside faults."""
    skip = fault_seconds(r)
    rows = {}
    for s in r.get("timeline", []):
        t = s["t"]
        if t < warmup:
            continue
        m = rows.setdefault(t // bucket, {"accepted": 0, "p99": []})
        m["accepted"] += s["events_accepted"]
        if t not in skip and s["events_accepted"] > 0:
            m["p99"].append(s["p99_ms"])
    return rows


def flat(samples, run, warmup, dur, field, per_minute=False):
    """The level at the end of the warm-up and the largest relative departure after it, up to
    the end of the load (the report and the verification after it are not the soak). With
    `per_minute`, each minute's median is judged, not every sample: open fds dip while a
    reset storm's sockets are reopened and rise by one while a /proc or store file is read at
    the moment of a sample, and neither is a leak, which stays; `min` and `max` are still
    those of every sample."""
    v = [(t, x[field]) for t, x in samples if x["run"] == run and warmup <= t <= dur - 10]
    if len(v) < 3:
        return None
    base = statistics.median(x for _, x in v[:3])
    judged = v
    if per_minute:
        by_minute = {}
        for t, x in v:
            by_minute.setdefault((t - warmup) // 60, []).append(x)
        judged = [(k, statistics.median(xs)) for k, xs in sorted(by_minute.items())]
    worst = max(abs(x - base) / base for _, x in judged) if base else 0.0
    return {"base": base, "min": min(x for _, x in v), "max": max(x for _, x in v),
            "judged": "minute medians" if per_minute else "every sample",
            "departure": round(worst, 4), "ok": worst <= FLAT}


def split(samples, run, warmup, dur):
    """Anonymous and file-backed RSS (code pages) at the end of the warm-up and at the end of
    the load: where RSS moved, not judged."""
    v = [x for t, x in samples if x["run"] == run and warmup <= t <= dur - 10
         and x.get("rss_anon_kb") is not None]
    if not v:
        return None
    return {k: {"base": v[0][k], "end": v[-1][k], "max": max(x[k] for x in v)}
            for k in ("rss_anon_kb", "rss_file_kb")}


def drift(mins):
    keys = sorted(k for k, m in mins.items() if m["p99"])
    if len(keys) < 5:
        return None
    fifth = max(1, len(keys) // 5)
    early = statistics.median(p for k in keys[:fifth] for p in mins[k]["p99"])
    late = statistics.median(p for k in keys[-fifth:] for p in mins[k]["p99"])
    limit = max(early * DRIFT_RATIO, early + DRIFT_MS)
    return {"early_p99_ms": early, "late_p99_ms": late, "limit_ms": round(limit, 3),
            "ok": late <= limit}


def svg(path, samples, mins_by_run, dur, bucket):
    w, h, pad = 900, 560, 50
    panels = [("RSS (MiB)", "rss_kb", lambda x: x / 1024), ("open fds", "fds", float)]
    colors = {"A": "#1f77b4", "B": "#d62728"}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
             'font-family="sans-serif" font-size="12">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             '<text x="50" y="18">soak: A = lphc + storms into the built-in sink, '
             'B = syslog TCP into syslog-ng (blue A, red B)</text>']
    ph = (h - 40) / 3

    def panel(i, title, series):
        top = 30 + i * ph
        ys = [y for pts in series.values() for _, y in pts] or [0, 1]
        lo, hi = min(ys), max(ys)
        if hi - lo < 1e-9:
            hi = lo + 1
        span = hi - lo
        lo, hi = lo - span * 0.1, hi + span * 0.1
        parts.append(f'<text x="{pad}" y="{top + 12}">{title} '
                     f'[{min(ys):.2f} .. {max(ys):.2f}]</text>')
        parts.append(f'<rect x="{pad}" y="{top + 16}" width="{w - 2 * pad}" '
                     f'height="{ph - 30}" fill="none" stroke="#999"/>')
        for run, pts in series.items():
            if not pts:
                continue
            coords = " ".join(
                f"{pad + (w - 2 * pad) * t / max(dur, 1):.1f},"
                f"{top + 16 + (ph - 30) * (1 - (y - lo) / (hi - lo)):.1f}" for t, y in pts)
            parts.append(f'<polyline fill="none" stroke="{colors[run]}" points="{coords}"/>')

    for i, (title, field, f) in enumerate(panels):
        panel(i, title, {run: [(t, f(x[field])) for t, x in samples if x["run"] == run]
                         for run in colors})
    panel(2, f"p99 ms per {bucket} s (median of the seconds outside faults)",
          {run: [(k * bucket, statistics.median(m["p99"])) for k, m in sorted(mins.items())
                 if m["p99"]] for run, mins in mins_by_run.items()})
    parts.append(f'<text x="{w - pad - 60}" y="{h - 8}">t = {dur} s</text></svg>')
    with open(path, "w") as f:
        f.write("\n".join(parts))


def main():
    out, pa, pb, rc_a, rc_b, warmup, dur = sys.argv[1:8]
    warmup, dur = int(warmup), int(dur)
    reports = {"A": load(pa), "B": load(pb)}
    rcs = {"A": int(rc_a), "B": int(rc_b)}
    with open(os.path.join(out, "samples.csv")) as f:
        samples = [(int(r["t"]), {"run": r["run"], "rss_kb": int(r["rss_kb"]),
                                   "fds": int(r["fds"]), "threads": int(r["threads"] or 0),
                                   "rss_anon_kb": int(r["rss_anon_kb"]) if r.get("rss_anon_kb") else None,
                                   "rss_file_kb": int(r["rss_file_kb"]) if r.get("rss_file_kb") else None})
                   for r in csv.DictReader(f)]
    bucket = 60 if dur >= 1800 else 10
    summary, ok = {"duration_s": dur, "warmup_s": warmup, "bucket_s": bucket}, True
    mins_by_run = {}
    with open(os.path.join(out, "minutes.csv"), "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["run", "from_s", "events_accepted", "p99_ms_median", "p99_ms_max"])
        for run, r in reports.items():
            mins = mins_by_run[run] = minutes(r, warmup, bucket)
            for k, m in sorted(mins.items()):
                wr.writerow([run, k * bucket, m["accepted"],
                             statistics.median(m["p99"]) if m["p99"] else "",
                             max(m["p99"]) if m["p99"] else ""])
    for run, r in reports.items():
        s, loss = r.get("summary", {}), r.get("loss", {})
        checks = {
            "exit_code": rcs[run],
            "events_sent": s.get("events_sent"),
            "events_accepted": s.get("events_accepted"),
            "events_failed": s.get("events_failed"),
            "achieved_eps": s.get("achieved_eps"),
            "batches_retried": s.get("batches_retried"),
            "events_resent": s.get("events_resent"),
            "connection_resets": s.get("connection_resets"),
            "not_sent": loss.get("not_sent"),
            "stored": loss.get("stored"),
            "accepted_not_stored": loss.get("accepted_not_stored"),
            "store": loss.get("store"),
            "faults": len((r.get("faults") or {}).get("actions", [])),
            "rss": flat(samples, run, warmup, dur, "rss_kb"),
            "rss_split": split(samples, run, warmup, dur),
            "fds": flat(samples, run, warmup, dur, "fds", per_minute=True),
            "latency_drift": drift(mins_by_run[run]),
        }
        if "_error" in r:
            checks["report_error"] = r["_error"]
        run_ok = (rcs[run] == 0 and "_error" not in r and not loss.get("accepted_not_stored")
                  and loss.get("stored") is not None
                  and all(checks[k] and checks[k]["ok"] for k in ("rss", "fds", "latency_drift")))
        checks["ok"] = run_ok
        ok &= run_ok
        summary[run] = checks
    summary["ok"] = ok
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    svg(os.path.join(out, "soak.svg"), samples, mins_by_run, dur, bucket)
    print(json.dumps(summary, indent=2))
    print("soak:", "PASS" if ok else "FAIL", file=sys.stderr)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
