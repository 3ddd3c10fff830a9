#!/usr/bin/env python3
"""Parses Prometheus text exposition (0.0.4) from stdin with the reference Python parser,
prometheus_client.parser.text_string_to_metric_families (PyPI prometheus-client), and prints
the families as one JSON list on stdout:

    [{"name": ..., "type": ..., "help": ...,
      "samples": [{"name": ..., "labels": {...}, "value": ...}, ...]}, ...]

Values that JSON cannot carry (+Inf, -Inf, NaN) are printed as those strings. The parser names
a counter family without its `_total` (its samples keep it); a sample outside its family comes
out as a family of its own typed `untyped`. A text it cannot parse exits 1 with the reason on
stderr. Used by tests/prometheus.rs through tests/support/prometheus.rs.
"""

import json
import math
import sys

from prometheus_client.parser import text_string_to_metric_families


def value(v):
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return v


def main():
    text = sys.stdin.read()
    try:
        families = [
            {
                "name": f.name,
                "type": f.type,
                "help": f.documentation,
                "samples": [
                    {"name": s.name, "labels": s.labels, "value": value(s.value)}
                    for s in f.samples
                ],
            }
            for f in text_string_to_metric_families(text)
        ]
    except Exception as e:  # the parser raises ValueError and others on bad input
        print(f"prom_parse: cannot parse: {e!r}", file=sys.stderr)
        return 1
    json.dump(families, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
