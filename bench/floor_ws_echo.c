/*
 * The kernel floor for bench/ws.sh: the least work any WebSocket echo server on this machine
 * can do per message. One thread, edge-triggered epoll, non-blocking sockets with TCP_NODELAY.
 * A connection's first bytes are its opening handshake: read up to "\r\n\r\n", the
 * Sec-WebSocket-Key found and answered with a canned 101 (the accept computed with the small
 * SHA-1 below; nothing else of the request is checked). Then on each readable event it
 * recv()s until EAGAIN and, for every whole frame read, unmasks the payload (8 bytes at a time)
 * and appends an unmasked frame with the same opcode and payload to one output buffer, sent
 * with one send() per read: one read and one write per message at one message in flight. A
 * frame split across reads waits in a per-connection buffer (malloc'd while needed, freed once
 * empty). A Close is answered with a Close and the socket closed; Pings, fragments, UTF-8 and
 * limits are not looked at.
 *
 * It is NOT a server, it is the measuring stick that tells how much of a real server's CPU per
 * message is the kernel's (syscalls, loopback TCP, wake-ups): out of any server's reach.
 *
 * build: cc -O2 -o floor_ws_echo bench/floor_ws_echo.c
 * run:   ./floor_ws_echo PORT
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
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CONNS 65536
#define BUF (1 << 20)

/* ---- SHA-1 (FIPS 180-4), only for the handshake's accept ---- */
static uint32_t rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static void sha1(const unsigned char *msg, size_t len, unsigned char out[20]) {
    uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    unsigned char block[64];
    size_t total = ((len + 8) / 64 + 1) * 64;
    for (size_t off = 0; off < total; off += 64) {
        for (int i = 0; i < 64; i++) {
            size_t p = off + i;
            unsigned char b = 0;
            if (p < len) b = msg[p];
            else if (p == len) b = 0x80;
            else if (p >= total - 8) b = (unsigned char)((uint64_t)len * 8 >> (8 * (total - 1 - p)));
            block[i] = b;
        }
        uint32_t w[80];
        for (int i = 0; i < 16; i++)
            w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 |
                   (uint32_t)block[4 * i + 2] << 8 | block[4 * i + 3];
        for (int i = 16; i < 80; i++) w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
        for (int i = 0; i < 80; i++) {
            uint32_t f, k;
            if (i < 20) f = (b & c) | (~b & d), k = 0x5A827999;
            else if (i < 40) f = b ^ c ^ d, k = 0x6ED9EBA1;
            else if (i < 60) f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
            else f = b ^ c ^ d, k = 0xCA62C1D6;
            uint32_t t = rol(a, 5) + f + e + k + w[i];
            e = d, d = c, c = rol(b, 30), b = a, a = t;
        }
        h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
    }
    for (int i = 0; i < 20; i++) out[i] = (unsigned char)(h[i / 4] >> (24 - 8 * (i % 4)));
}

static void base64(const unsigned char *in, size_t n, char *out) {
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = in[i] << 16 | (i + 1 < n ? in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
        out[o++] = t[v >> 18 & 63];
        out[o++] = t[v >> 12 & 63];
        out[o++] = i + 1 < n ? t[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? t[v & 63] : '=';
    }
    out[o] = 0;
}

/* ---- connections ---- */
struct conn {
    unsigned char open; /* handshake done */
    unsigned char *pend; /* bytes of an unfinished frame (or head), malloc'd */
    size_t plen;
};
static struct conn conns[MAX_CONNS];
static unsigned char in[BUF], out[BUF + 16];

static void die(const char *what) {
    perror(what);
    exit(1);
}

static void drop_conn(int fd) {
    free(conns[fd].pend);
    conns[fd] = (struct conn){0};
    close(fd);
}

/* The head in in[0..n]: answers its key; returns the bytes it used, 0 if incomplete, -1 bad. */
static ssize_t handshake(int fd, size_t n) {
    unsigned char *end = memmem(in, n, "\r\n\r\n", 4);
    if (!end) return 0;
    *end = 0;
    char *key = strcasestr((char *)in, "\r\nsec-websocket-key:");
    if (!key) return -1;
    key += 20;
    while (*key == ' ') key++;
    size_t klen = strcspn(key, " \r");
    if (klen == 0 || klen > 64) return -1;
    unsigned char cat[128], digest[20];
    memcpy(cat, key, klen);
    memcpy(cat + klen, "258EAFA5-E914-47DA-95CA-C5AB0DC85B11", 36);
    sha1(cat, klen + 36, digest);
    char accept[32];
    base64(digest, 20, accept);
    char res[256];
    int len = snprintf(res, sizeof res,
                       "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                       "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
                       accept);
    if (send(fd, res, len, MSG_NOSIGNAL) != len) return -1;
    return end + 4 - in;
}

/* Unmasks and echoes every whole frame in in[0..n] into out; returns bytes used, -1 on Close. */
static ssize_t frames(size_t n, size_t *olen) {
    size_t p = 0, o = 0;
    while (n - p >= 2) {
        unsigned char b0 = in[p], b1 = in[p + 1];
        uint64_t len = b1 & 127;
        size_t h = 2;
        if (len == 126) {
            if (n - p < 4) break;
            len = (uint64_t)in[p + 2] << 8 | in[p + 3];
            h = 4;
        } else if (len == 127) {
            if (n - p < 10) break;
            len = 0;
            for (int i = 0; i < 8; i++) len = len << 8 | in[p + 2 + i];
            h = 10;
        }
        size_t mask = (b1 & 128) ? 4 : 0;
        if (n - p < h + mask + len) break;
        if (len + 10 > BUF - o) break; /* the output is full: the rest waits for the next read */
        unsigned char *payload = in + p + h + mask;
        if (mask) {
            uint32_t k32;
            memcpy(&k32, in + p + h, 4);
            uint64_t k = (uint64_t)k32 << 32 | k32;
            size_t i = 0;
            for (; i + 8 <= len; i += 8) {
                uint64_t v;
                memcpy(&v, payload + i, 8);
                v ^= k;
                memcpy(payload + i, &v, 8);
            }
            for (; i < len; i++) payload[i] ^= ((unsigned char *)&k32)[i & 3];
        }
        out[o] = b0;
        if (len < 126) {
            out[o + 1] = (unsigned char)len;
            o += 2;
        } else if (len < 65536) {
            out[o + 1] = 126, out[o + 2] = (unsigned char)(len >> 8), out[o + 3] = (unsigned char)len;
            o += 4;
        } else {
            out[o + 1] = 127;
            for (int i = 0; i < 8; i++) out[o + 2 + i] = (unsigned char)(len >> (56 - 8 * i));
            o += 10;
        }
        memcpy(out + o, payload, len);
        o += len;
        p += h + mask + len;
        if ((b0 & 15) == 8) {
            *olen = o;
            return -1;
        }
    }
    *olen = o;
    return p;
}

static void readable(int fd) {
    struct conn *c = &conns[fd];
    for (;;) {
        size_t have = c->plen;
        if (have) memcpy(in, c->pend, have);
        ssize_t r = recv(fd, in + have, BUF - have, 0);
        if (r <= 0) {
            if (r < 0 && errno == EAGAIN) return;
            drop_conn(fd);
            return;
        }
        size_t n = have + r;
        ssize_t used = 0;
        if (!c->open) {
            used = handshake(fd, n);
            if (used < 0) {
                drop_conn(fd);
                return;
            }
            if (used > 0) c->open = 1;
        }
        if (c->open) {
            size_t olen;
            if (used > 0) { /* the bytes after the handshake's head, once */
                memmove(in, in + used, n - used);
                n -= used;
                used = 0;
            }
            ssize_t f = frames(n, &olen);
            /* Loopback: a short send does not happen in the benchmark; a real server would
             * buffer the rest. */
            if (olen && send(fd, out, olen, MSG_NOSIGNAL) < 0) {
                drop_conn(fd);
                return;
            }
            if (f < 0) {
                drop_conn(fd);
                return;
            }
            used = f;
        }
        size_t rest = n - used;
        if (rest) {
            unsigned char *p = realloc(c->pend, rest);
            if (!p) die("realloc");
            memcpy(p, in + used, rest);
            c->pend = p;
        } else {
            free(c->pend);
            c->pend = NULL;
        }
        c->plen = rest;
        /* Like the servers: a short read drained the socket. */
        if ((size_t)r < BUF - have) return;
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PORT\n", argv[0]);
        return 2;
    }
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (ls < 0) die("socket");
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[1]))};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(ls, (struct sockaddr *)&addr, sizeof addr) < 0) die("bind");
    if (listen(ls, 4096) < 0) die("listen");
    int ep = epoll_create1(0);
    if (ep < 0) die("epoll_create1");
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = ls};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev) < 0) die("epoll_ctl");
    struct epoll_event events[512];
    for (;;) {
        int n = epoll_wait(ep, events, 512, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("epoll_wait");
        }
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == ls) {
                int c;
                while ((c = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    if (c >= MAX_CONNS) {
                        close(c);
                        continue;
                    }
                    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    conns[c] = (struct conn){0};
                    struct epoll_event cev = {.events = EPOLLIN | EPOLLET, .data.fd = c};
                    epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev);
                }
                continue;
            }
            readable(fd);
        }
    }
}
