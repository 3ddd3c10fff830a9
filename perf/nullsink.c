/* A null syslog sink for perf/syslog-vs-loggen.sh: accepts TCP connections on 127.0.0.1:PORT
 * (or receives UDP datagrams), reads everything and discards it, and prints the bytes (and, for
 * UDP, datagrams) it got when it gets SIGTERM or after the given seconds. One thread, epoll.
 *   nullsink tcp|udp PORT SECONDS */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static void on_term(int s) { (void)s; stop = 1; }

int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: nullsink tcp|udp PORT SECONDS\n"); return 2; }
  int udp = strcmp(argv[1], "udp") == 0;
  int port = atoi(argv[2]), secs = atoi(argv[3]);
  signal(SIGTERM, on_term);
  int s = socket(AF_INET, udp ? SOCK_DGRAM : SOCK_STREAM, 0);
  int one = 1, big = 32 << 20;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  setsockopt(s, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (bind(s, (struct sockaddr *)&a, sizeof a) < 0) { perror("bind"); return 1; }
  if (!udp && listen(s, 64) < 0) { perror("listen"); return 1; }
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = s}, evs[64];
  epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);
  static char buf[1 << 20];
  unsigned long long bytes = 0, dgrams = 0;
  time_t end = time(NULL) + secs;
  while (!stop && time(NULL) < end) {
    int n = epoll_wait(ep, evs, 64, 200);
    for (int i = 0; i < n; i++) {
      int fd = evs[i].data.fd;
      if (fd == s && !udp) {
        int c = accept(s, NULL, NULL);
        if (c >= 0) { struct epoll_event e = {.events = EPOLLIN, .data.fd = c}; epoll_ctl(ep, EPOLL_CTL_ADD, c, &e); }
        continue;
      }
      if (udp) {
        struct mmsghdr m[64]; struct iovec v[64]; static char d[64][65536];
        for (int k = 0; k < 64; k++) { v[k].iov_base = d[k]; v[k].iov_len = sizeof d[k]; memset(&m[k], 0, sizeof m[k]); m[k].msg_hdr.msg_iov = &v[k]; m[k].msg_hdr.msg_iovlen = 1; }
        int r = recvmmsg(fd, m, 64, MSG_DONTWAIT, NULL);
        for (int k = 0; k < r; k++) { bytes += m[k].msg_len; dgrams++; }
        continue;
      }
      ssize_t r = read(fd, buf, sizeof buf);
      if (r <= 0) { epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL); close(fd); } else bytes += (unsigned long long)r;
    }
  }
  printf("bytes %llu datagrams %llu\n", bytes, dgrams);
  return 0;
}
