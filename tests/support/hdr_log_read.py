"""Reads an HdrHistogram interval log with HdrHistogram's Python port (PyPI `hdrhistogram`,
module `hdrh`) and prints what its HistogramLogReader saw, as JSON on stdout: the log's start
time, and per interval its tag, absolute start and end (ms since the epoch), total count, max,
every recorded value with its count, and some percentiles; then, per tag, all its intervals
added into one histogram (the exact merge the format exists for). Used by tests/hdr_log.rs.

usage: hdr_log_read.py LOG
"""
import json
import sys

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

PERCENTILES = [10.0, 50.0, 90.0, 99.0, 99.9, 100.0]


def describe(h):
    return {
        "total": h.get_total_count(),
        "max": h.get_max_value(),
        "values": [
            [v.value_iterated_to, v.count_at_value_iterated_to]
            for v in h.get_recorded_iterator()
        ],
        "percentiles": {str(p): h.get_value_at_percentile(p) for p in PERCENTILES},
    }


def main(path):
    reader = HistogramLogReader(path, HdrHistogram(1, 60_000_000, 3))
    intervals = []
    merged = {}
    while True:
        h = reader.get_next_interval_histogram()
        if h is None:
            break
        tag = h.get_tag()
        d = describe(h)
        d.update(
            tag=tag,
            start_ms=h.get_start_time_stamp(),
            end_ms=h.get_end_time_stamp(),
        )
        intervals.append(d)
        if tag not in merged:
            merged[tag] = HdrHistogram(1, 60_000_000, 3)
        merged[tag].add(h)
    reader.close()
    out = {
        "start_time_sec": reader.get_start_time_sec(),
        "intervals": intervals,
        "merged": {tag: describe(h) for tag, h in merged.items()},
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
