"""A process with a known CPU duty cycle, for `ingestbench spawn` tests: busy for BUSY_MS of
its own CPU time (process_time, so contention cannot shrink it) in every 100 ms of wall time,
on an absolute schedule (never catching up after falling behind), for at most SECONDS. Usage: duty_cycle.py SECONDS [BUSY_MS]."""
import sys
import time

end = time.monotonic() + float(sys.argv[1] if len(sys.argv) > 1 else 60)
busy = float(sys.argv[2] if len(sys.argv) > 2 else 30) / 1000.0
nxt = time.monotonic()
while time.monotonic() < end:
    c = time.process_time()
    while time.process_time() - c < busy:
        pass
    nxt += 0.1
    d = nxt - time.monotonic()
    if d > 0:
        time.sleep(d)
    else:
        # Behind (a busy machine): start afresh rather than catch up in a burst.
        nxt = time.monotonic()
