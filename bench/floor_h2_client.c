/*
 * The kernel floor for bench/load.sh's h2c shapes: the least work any epoll HTTP/2 (h2c, prior
 * knowledge) load generator on this machine can do per request. One thread, level-triggered
 * epoll (each socket registered once, never modified), non-blocking sockets with TCP_NODELAY.
 * Per connection: the preface, a SETTINGS frame (initial stream window 2^31-1, no push), a
 * connection WINDOW_UPDATE to 2^31-1 and STREAMS requests, all in one send(); then on each
 * readable event one recv(), a walk over the 9-byte frame headers (a frame may straddle recv()
 * boundaries: the walk keeps a few bytes of state per connection), a response counted on each
 * frame carrying END_STREAM, and one send() with as many new requests as responses completed
 * (plus a SETTINGS or PING ACK when the server sent one, and a connection WINDOW_UPDATE once a
 * GiB was received). With STREAMS = 1 that is one send() and one recv() per request when the
 * server writes a response's HEADERS and DATA at once.
 * Each request is one pre-encoded HEADERS frame (END_STREAM | END_HEADERS) whose HPACK block
 * uses no dynamic table: indexed :method GET and :scheme http, :path and :authority as literals
 * without indexing on static names; only the stream id is patched in.
 * The payloads are skipped: no HPACK decode (only the first response's first header byte is
 * checked once to be 0x88, indexed :status 200), no validation, no timers, no latency record.
 * It is NOT a load generator, it is the measuring stick that tells how much of a real h2c
 * generator's CPU per request is the kernel's (syscalls, loopback TCP, wake-ups) and therefore
 * out of any generator's reach.
 *
 * build: cc -O2 -o floor_h2_client bench/floor_h2_client.c
 * run:   ./floor_h2_client PORT CONNS STREAMS SECONDS [PATH]
 * prints: requests N, seconds S, req/s R, cpu_us_per_req C (utime+stime from getrusage(RUSAGE_SELF))
 * FLOOR_DEBUG=1 also prints frame and syscall counts to stderr (to check the count against the
 * server's, and how many responses each recv() brought).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 4096
#define MAX_STREAMS 256 /* STREAMS requests of <= 156 bytes fit in one BUF */
#define BUF 65536
#define MAX_STREAM_ID 0x7fffffffu
#define WINDOW_MAX 0x7fffffffu
#define WINDOW_REFILL (1u << 30) /* consumed DATA bytes that trigger a connection WINDOW_UPDATE */

/* RFC 9113 §6: frame types and flags used here. */
enum { DATA = 0, HEADERS = 1, RST_STREAM = 3, SETTINGS = 4, PING = 6, GOAWAY = 7 };
enum { END_STREAM = 0x1, ACK = 0x1 };

/* Per connection (indexed by fd): where the frame walk stands between two recv()s. */
struct conn {
    uint8_t live;
    uint8_t hlen;   /* bytes of the current frame header received so far (0..9) */
    uint8_t hdr[9]; /* the current frame header */
    uint8_t type, flags;
    uint8_t capn, cap_want; /* payload bytes captured so far / wanted (PING, GOAWAY, ...) */
    uint8_t cap[8];
    uint32_t left;      /* payload bytes of the current frame not received yet */
    uint32_t next_id;   /* next client stream id (odd) */
    uint32_t consumed;  /* DATA bytes since the last connection WINDOW_UPDATE */
};
static struct conn cs[MAX_CONNS];

static uint8_t req[9 + 256]; /* the pre-encoded HEADERS frame */
static size_t reqlen;
static int status_checked;
static unsigned long long n_headers, n_data, data_bytes, n_recv, n_send;
static char out[BUF];

static void die(const char *what) {
    perror(what);
    exit(1);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static size_t frame_head(char *p, uint32_t len, uint8_t type, uint8_t flags, uint32_t id) {
    p[0] = len >> 16, p[1] = len >> 8, p[2] = len;
    p[3] = type, p[4] = flags;
    p[5] = id >> 24, p[6] = id >> 16, p[7] = id >> 8, p[8] = id;
    return 9;
}

/* Appends k requests to p, stream ids from c->next_id up by 2; returns the bytes written. */
static size_t requests(char *p, struct conn *c, unsigned k) {
    size_t n = 0;
    for (unsigned i = 0; i < k; i++) {
        if (c->next_id > MAX_STREAM_ID - 2) break; /* ids exhausted: let the streams drain */
        memcpy(p + n, req, reqlen);
        uint32_t id = c->next_id;
        p[n + 5] = id >> 24, p[n + 6] = id >> 16, p[n + 7] = id >> 8, p[n + 8] = id;
        c->next_id += 2;
        n += reqlen;
    }
    return n;
}

/* A frame's payload has been received in full: act on it. Returns 1 if it completed a response,
 * -1 if the connection is to stop; appends any control frame to answer to out[*o]. */
static int frame_done(int fd, struct conn *c, size_t *o) {
    switch (c->type) {
    case DATA:
        n_data++;
        return c->flags & END_STREAM;
    case HEADERS:
        n_headers++;
        if (!status_checked) {
            /* RFC 7541 Appendix A: static index 8 is ":status: 200"; 0x88 indexes it. */
            if (c->capn < 1 || c->cap[0] != 0x88) {
                fprintf(stderr, "floor_h2_client: the first response is not a 200 "
                                "(first header byte 0x%02x)\n", c->capn ? c->cap[0] : 0);
                exit(1);
            }
            status_checked = 1;
        }
        return c->flags & END_STREAM;
    case SETTINGS:
        if (!(c->flags & ACK)) *o += frame_head(out + *o, 0, SETTINGS, ACK, 0);
        return 0;
    case PING:
        if (!(c->flags & ACK) && c->capn == 8) {
            *o += frame_head(out + *o, 8, PING, ACK, 0);
            memcpy(out + *o, c->cap, 8);
            *o += 8;
        }
        return 0;
    case RST_STREAM:
        fprintf(stderr, "floor_h2_client: RST_STREAM on stream %u, error %u\n",
                be32(c->hdr + 5) & MAX_STREAM_ID, c->capn == 4 ? be32(c->cap) : 0);
        exit(1);
    case GOAWAY:
        fprintf(stderr, "floor_h2_client: GOAWAY on fd %d: last stream %u, error %u\n", fd,
                c->capn == 8 ? be32(c->cap) & MAX_STREAM_ID : 0, c->capn == 8 ? be32(c->cap + 4) : 0);
        return -1;
    default: /* WINDOW_UPDATE, PRIORITY, PUSH_PROMISE (push is off), CONTINUATION, ...: skipped */
        return 0;
    }
}

/* Walks the frames in buf[0..n) on connection c; returns the responses completed, or -1 if the
 * connection is to stop. */
static int walk(int fd, struct conn *c, const uint8_t *buf, size_t n, size_t *o) {
    int done = 0;
    size_t i = 0;
    for (;;) {
        if (c->left > 0) { /* inside a payload */
            size_t take = n - i < c->left ? n - i : c->left;
            while (c->capn < c->cap_want && take > 0 && i < n) {
                c->cap[c->capn++] = buf[i++];
                take--, c->left--;
            }
            i += take, c->left -= take;
            if (c->left > 0) return done; /* the buffer ends inside this payload */
            int r = frame_done(fd, c, o);
            if (r < 0) return -1;
            done += r;
            continue;
        }
        if (i == n) return done;
        /* A frame header: straight from the buffer, or completed from the carried bytes. */
        const uint8_t *h;
        if (c->hlen == 0 && n - i >= 9) {
            h = buf + i;
            i += 9;
        } else {
            while (c->hlen < 9 && i < n) c->hdr[c->hlen++] = buf[i++];
            if (c->hlen < 9) return done;
            c->hlen = 0;
            h = c->hdr;
        }
        c->left = (uint32_t)h[0] << 16 | (uint32_t)h[1] << 8 | h[2];
        c->type = h[3], c->flags = h[4], c->capn = 0;
        switch (c->type) {
        case DATA:
            data_bytes += c->left;
            c->consumed += c->left; /* RFC 9113 §6.9.1: the whole payload counts, padding too */
            if (c->consumed >= WINDOW_REFILL) {
                *o += frame_head(out + *o, 4, 8 /* WINDOW_UPDATE */, 0, 0);
                uint32_t inc = htonl(c->consumed);
                memcpy(out + *o, &inc, 4);
                *o += 4;
                c->consumed = 0;
            }
            c->cap_want = 0;
            break;
        case HEADERS: c->cap_want = status_checked ? 0 : 1; break;
        case RST_STREAM:
            if (h != c->hdr) memcpy(c->hdr, h, 9); /* the report names the stream */
            c->cap_want = 4;
            break;
        case PING: case GOAWAY: c->cap_want = 8; break;
        default: c->cap_want = 0;
        }
        if (c->left == 0) {
            int r = frame_done(fd, c, o);
            if (r < 0) return -1;
            done += r;
        }
    }
}

int main(int argc, char **argv) {
    if (argc < 5 || argc > 6) {
        fprintf(stderr, "usage: %s PORT CONNS STREAMS SECONDS [PATH]\n", argv[0]);
        return 2;
    }
    int port = atoi(argv[1]), conns = atoi(argv[2]), streams = atoi(argv[3]);
    double seconds = atof(argv[4]);
    const char *path = argc == 6 ? argv[5] : "/plaintext";
    if (conns < 1 || conns > MAX_CONNS - 16) {
        fprintf(stderr, "floor_h2_client: CONNS must be 1..%d\n", MAX_CONNS - 16);
        return 2;
    }
    if (streams < 1 || streams > MAX_STREAMS) {
        fprintf(stderr, "floor_h2_client: STREAMS must be 1..%d\n", MAX_STREAMS);
        return 2;
    }
    char authority[64];
    size_t alen = snprintf(authority, sizeof authority, "127.0.0.1:%d", port);
    size_t plen = strlen(path);
    if (plen > 126) {
        fprintf(stderr, "floor_h2_client: PATH must be shorter than 127 bytes\n");
        return 2;
    }
    /* RFC 7541: 0x82 = indexed :method GET, 0x86 = indexed :scheme http; 0x04 and 0x01 =
     * literal without indexing (§6.2.2) with static name index 4 (:path) and 1 (:authority),
     * each followed by a raw (not Huffman) string whose length fits the 7-bit prefix. */
    uint8_t *b = req + 9;
    size_t blen = 0;
    b[blen++] = 0x82;
    b[blen++] = 0x86;
    b[blen++] = 0x04, b[blen++] = plen, memcpy(b + blen, path, plen), blen += plen;
    b[blen++] = 0x01, b[blen++] = alen, memcpy(b + blen, authority, alen), blen += alen;
    reqlen = 9 + blen;
    frame_head((char *)req, blen, HEADERS, 0x4 /* END_HEADERS */ | END_STREAM, 0);

    /* RFC 9113 §3.4 preface; §6.5.2 SETTINGS_ENABLE_PUSH (2) = 0 and
     * SETTINGS_INITIAL_WINDOW_SIZE (4) = 2^31-1; §6.9 connection WINDOW_UPDATE from the
     * initial 65,535 to 2^31-1. */
    static char hello[BUF];
    size_t hlen = 0;
    memcpy(hello, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24), hlen = 24;
    hlen += frame_head(hello + hlen, 12, SETTINGS, 0, 0);
    const uint8_t settings[12] = {0, 2, 0, 0, 0, 0, 0, 4, 0x7f, 0xff, 0xff, 0xff};
    memcpy(hello + hlen, settings, 12), hlen += 12;
    hlen += frame_head(hello + hlen, 4, 8 /* WINDOW_UPDATE */, 0, 0);
    uint32_t inc = htonl(WINDOW_MAX - 65535);
    memcpy(hello + hlen, &inc, 4), hlen += 4;

    int ep = epoll_create1(0);
    if (ep < 0) die("epoll_create1");
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1, live = 0;
    for (int i = 0; i < conns; i++) {
        /* Blocking connect (loopback: immediate), then non-blocking for the run. */
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) die("socket");
        if (fd >= MAX_CONNS) die("fd too large");
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) die("connect");
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) die("epoll_ctl");
        struct conn *c = &cs[fd];
        memset(c, 0, sizeof *c);
        c->live = 1, c->next_id = 1;
        live++;
        size_t n = hlen;
        memcpy(out, hello, hlen);
        n += requests(out + n, c, streams);
        if (send(fd, out, n, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)n) die("send");
    }

    static uint8_t in[BUF];
    unsigned long long done = 0;
    double start = now_s(), deadline = start + seconds, t = start;
    struct epoll_event events[512];
    while (t < deadline && live > 0) {
        int n = epoll_wait(ep, events, 512, 100);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("epoll_wait");
        }
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            struct conn *c = &cs[fd];
            if (!c->live) continue;
            ssize_t r = recv(fd, in, sizeof in, MSG_DONTWAIT);
            n_recv++;
            if (r <= 0) {
                if (r < 0 && errno == EAGAIN) continue;
                fprintf(stderr, "floor_h2_client: connection closed or failed\n");
                return 1;
            }
            size_t o = 0;
            int k = walk(fd, c, in, r, &o);
            if (k < 0) { /* GOAWAY: stop this connection */
                c->live = 0, live--;
                close(fd);
                continue;
            }
            done += k;
            /* Control frames first, then one new request per completed response. */
            o += requests(out + o, c, k);
            if (o > 0) {
                n_send++;
                if (send(fd, out, o, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)o) die("send");
            }
        }
        t = now_s();
    }
    double elapsed = t - start;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
                 ru.ru_stime.tv_usec / 1e6;
    if (getenv("FLOOR_DEBUG"))
        fprintf(stderr, "floor_h2_client: %llu HEADERS, %llu DATA frames, %llu DATA bytes, "
                        "%llu recv, %llu send after the first\n",
                n_headers, n_data, data_bytes, n_recv, n_send);
    printf("requests %llu\nseconds %.3f\nreq/s %.0f\ncpu_us_per_req %.3f\n", done, elapsed,
           done / elapsed, done ? cpu * 1e6 / done : 0.0);
    return 0;
}
