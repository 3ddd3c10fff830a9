# A minimal `_bulk` answerer for perf/bulk-throughput.sh: reads each request (Content-Length),
# answers {"took":0,"errors":false,"items":[]} to every path, prints requests and bytes at the
# end. Not a checker (tests/support/bulk_store.rs is). Usage: bulk_answerer.py PORT SECONDS
import asyncio, sys
stats = {"requests": 0, "events": 0, "bytes": 0}
ANS = b'{"took":0,"errors":false,"items":[]}'
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(ANS)
async def conn(r, w):
    try:
        while True:
            head = await r.readuntil(b"\r\n\r\n")
            n = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    n = int(line[15:])
            body = await r.readexactly(n)
            stats["requests"] += 1
            stats["events"] += body.count(b"\n") // 2
            stats["bytes"] += len(head) + n
            w.write(HEAD + ANS)
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        w.close()
async def main():
    s = await asyncio.start_server(conn, "127.0.0.1", int(sys.argv[1]))
    async with s:
        try:
            await asyncio.sleep(float(sys.argv[2]))
        finally:
            print(stats, flush=True)
asyncio.run(main())
