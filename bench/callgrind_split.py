#!/usr/bin/env python3
"""Self instructions (Ir) of a callgrind dump, grouped by where the code lives.

usage: callgrind_split.py NAME N1 DUMP1 N2 DUMP2
       (two runs of N1 < N2 requests; prints (DUMP2 - DUMP1) / (N2 - N1) per group)

Reads the dump itself (not callgrind_annotate): every cost line is an instruction's self cost,
filed under the source file it came from (`fl=`, and `fi=`/`fe=` for code inlined from another
file) and the function whose symbol holds it (`fn=`); the cost line after a `calls=` line is
the callee's inclusive cost and is skipped, so nothing is counted twice.

An instruction is grouped by the function whose symbol holds it when that function belongs
to a known crate (quinn-proto's use of `bytes`, h3's of h3-quinn's count as theirs); else by
its source file when that is peregrine's (by module) or a known crate's (the handler inlined
into `server::h3` is the handler's; h3's futures inlined into the example's `serve` or into
tokio's task harness are h3's); else by the peregrine module of its function (std's
`Vec::push` inlined into `http3::qpack` is QPACK's), a crate's type in a standard library
function's name (`drop_in_place<h3::...>`), or the symbol's name (C code without line
tables: aws-lc, libc). Prints one line per group, then the top functions of a few groups.

A second column charges the code every layer calls (the standard library, other crates such as
`bytes` and `hashbrown`, the allocator, libc) to its callers, in proportion to each caller's
calls, up to the first caller with code of its own, split by that code's groups (callgrind
keeps caller-callee pairs, not whole stacks, so this is an estimate).
"""

import re
import os
import sys
from collections import defaultdict

Q = "QUIC (quinn, quinn-proto, quinn-udp)"
T = "TLS + crypto (rustls, aws-lc)"
H3 = "HTTP/3 + QPACK (ours: http3, server::h3; peer: h3)"
GLUE = "QUIC glue (ours: net::quic; peer: h3-quinn)"
FIELDS = "ours: field checks, Huffman, field table (from HPACK)"
HTTP = "http crate (HeaderMap, HeaderName, Uri)"
HANDLER = "handler (ours: files, request, response; peer: serve)"
PEREGRINE = "other peregrine (server, worker, net)"
TOKIO = "tokio"
CRATES = "other Rust crates (bytes, hashbrown, ...)"
STD = "Rust std / core / alloc"
ALLOC = "allocator (malloc, free, realloc)"
LIBC = "libc (memcpy, syscall wrappers, ...)"
OTHER = "other"
GROUPS = [Q, T, H3, GLUE, FIELDS, HTTP, HANDLER, PEREGRINE, TOKIO, CRATES, STD, ALLOC, LIBC, OTHER]

# peregrine's own code, by module path (from the symbol, else from the source file).
PEREGRINE_MODULES = [
    (H3, r"^(http3|server/h3)(/|$)"),
    (GLUE, r"^net/quic"),
    (FIELDS, r"^(field_codec|http2/hpack|http2/conn/validate|headers|ascii|text)(/|$)"),
    (HANDLER, r"^(files|handler|request|response|router|routing)(/|$)"),
]
# (group, pattern on the source file path) in order; the first match wins.
FILE_GROUPS = [
    (Q, r"/quinn(-proto|-udp)?-\d"),
    (T, r"/(rustls|aws-lc-(rs|sys)|ring)-\d|/aws-lc/"),
    (H3, r"/h3-\d"),
    (GLUE, r"/h3-quinn-\d"),
    (HTTP, r"/http-\d"),
    (HANDLER, r"peregrine/examples/"),
    (TOKIO, r"/tokio-\d"),
    (CRATES, r"/\.cargo/registry/|/cargo/registry/"),
]
# (group, pattern on the demangled function name) for code whose file is unknown or std's.
FN_GROUPS = [
    (Q, r"^(<)?(quinn|quinn_proto|quinn_udp)::"),
    (T, r"^(<)?(rustls|aws_lc_rs|ring)::|^aws_lc_|^_?aws_lc|"
     r"^(aes|gcm|aesni|ChaCha20|chacha20|poly1305|sha256|sha512|x25519|ecp_nistz256|bn_|"
     r"CRYPTO_|EVP_|GFp_)"),
    (H3, r"^(<)?h3::"),
    (GLUE, r"^(<)?h3_quinn::"),
    (HTTP, r"^(<)?http::"),
    (HANDLER, r"^(<)?h3_quinn_peer::"),
    (PEREGRINE, r"^(<)?(peregrine|peregrine_cli)::"),
    (TOKIO, r"^(<)?tokio::"),
    (CRATES, r"^(<)?(bytes|hashbrown|tracing|slab|smallvec|tinyvec|futures\w*|pin_project\w*)::"),
    (ALLOC,
     r"^(malloc|free|realloc|calloc|_int_malloc|_int_free|_int_realloc|malloc_consolidate|"
     r"unlink_chunk|tcache_|__libc_malloc|__libc_free|__libc_realloc|__libc_calloc|"
     r"cfree|arena_|sysmalloc|__rustc::__rust_|__rust_alloc|__rust_dealloc|__rust_realloc|posix_memalign|"
     r"_mid_memalign|_int_memalign|alloc::alloc::|__rdl_|__rg_|_int_free_merge|"
     r"_int_free_create|_int_free_maybe)"),
    (LIBC,
     r"^(__?mem|mem|__?str|str|__libc_|__GI_|__sendmsg|sendmsg|recvmsg|__recvmsg|sendmmsg|"
     r"recvmmsg|epoll|__epoll|clock_gettime|__clock_gettime|__vdso|syscall|pthread_|"
     r"__pthread|__lll|__futex|futex|read$|write$|__read|__write|getpid|__errno|_dl_|"
     r"__tls_get_addr|__sigsetjmp|__memcpy|__memmove|__memset|__memcmp|bcmp)"),
    (STD, r"^(<)?(std|core|alloc)::"),
]
OWNERS = (Q, T, H3, GLUE, HTTP, CRATES)
FILE_RE = [(g, re.compile(p)) for g, p in FILE_GROUPS]
FN_RE = [(g, re.compile(p)) for g, p in FN_GROUPS]
MOD_RE = [(g, re.compile(p)) for g, p in PEREGRINE_MODULES]
PEREGRINE_SYMBOL = re.compile(r"^<?(?:peregrine|peregrine_cli)::((?:[a-z0-9_]+::)*)")
PEREGRINE_FILE = re.compile(r"peregrine/src/(.*)\.rs$")
STD_GENERIC = re.compile(r"^<?(?:std|core|alloc)::[^<]*<(.*)")
NAME = re.compile(r"^\((\d+)\)(?: (.*))?$")


def read(path, cost, edges):
    """Adds `path`'s self cost per (object, file, function) into `cost`, and each call's
    inclusive cost per (caller, callee) into `edges`."""
    names = {"fl": {}, "fn": {}, "ob": {}}
    ob = fl = fi = fn = None
    skip = False
    callee = None
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if not line:
            continue
        c = line[0]
        if c.isdigit() or c in "+-*":
            if skip:
                skip = False
                parts = line.split()
                if len(parts) >= 2:
                    edges[(fn, callee)] += int(parts[1])
                continue
            parts = line.split()
            if len(parts) >= 2:
                cost[(ob, fi or fl, fn)] += int(parts[1])
            continue
        key, _, value = line.partition("=")
        if key == "ob":
            m = NAME.match(value)
            if m:
                if m.group(2) is not None:
                    names["ob"][m.group(1)] = m.group(2)
                value = names["ob"].get(m.group(1), value)
            ob = value
        elif key in ("fl", "fi", "fe", "fn"):
            table = names["fn" if key == "fn" else "fl"]
            m = NAME.match(value)
            if m:
                if m.group(2) is not None:
                    table[m.group(1)] = m.group(2)
                value = table.get(m.group(1), value)
            if key == "fl":
                fl, fi = value, None
            elif key in ("fi", "fe"):
                fi = None if value == fl else value
            else:
                fn = value
        elif key in ("cfl", "cfi", "cfn", "cob"):
            # The callee's name may be defined here for later use.
            table = names["fn" if key == "cfn" else "ob" if key == "cob" else "fl"]
            m = NAME.match(value)
            if m and m.group(2) is not None:
                table[m.group(1)] = m.group(2)
            if key == "cfn":
                callee = table.get(m.group(1), value) if m else value
        elif key == "calls":
            skip = True


def peregrine_module(module):
    for g, r in MOD_RE:
        if r.search(module):
            return g
    return PEREGRINE


def group_of(ob, file, fn):
    fn = fn or ""
    # Another crate's function keeps what it inlined (quinn-proto's use of `bytes`, h3's of
    # h3-quinn's): its code is the cost of that crate's design.
    for g, r in FN_RE:
        if g in OWNERS and r.search(fn):
            return g
    # peregrine's and the example's code by the source file it came from (the handler inlined
    # into `server::h3` is the handler's; h3's futures inlined into the example's `serve` are
    # h3's), then by the module of the function holding it (std's `Vec::push` inlined into
    # `http3::qpack` is QPACK's).
    m = PEREGRINE_FILE.search(file or "")
    if m:
        return peregrine_module(m.group(1))
    for g, r in FILE_RE:
        if r.search(file or ""):
            return g
    m = PEREGRINE_SYMBOL.match(fn)
    if m:
        return peregrine_module(m.group(1).replace("::", "/"))
    # A standard library function instantiated for a crate's type (`drop_in_place<h3::...>`,
    # `<alloc::vec::Vec<quinn_proto::...>>::...`) counts for that crate.
    m = STD_GENERIC.match(fn)
    if m:
        inner = re.sub(r"^(&|\*|mut |const |dyn |\(|\[|<)+", "", m.group(1))
        m = PEREGRINE_SYMBOL.match(inner)
        if m:
            return peregrine_module(m.group(1).replace("::", "/"))
        for g, r in FN_RE:
            if g != STD and r.search(inner):
                return g
    for g, r in FN_RE:
        if r.search(fn):
            return g
    # Anything else in the C library or the dynamic loader.
    if re.search(r"/(libc|libm|ld-linux[^/]*|libgcc_s)\.so", ob or ""):
        return LIBC
    return OTHER


# Code every layer calls: its cost is charged to the callers (see `charged`).
SHARED = (STD, CRATES, ALLOC, LIBC, OTHER)


def split(dump):
    """(Ir per group, Ir per group and function, Ir per function and group, call edges)."""
    cost, edges = defaultdict(int), defaultdict(int)
    read(dump, cost, edges)
    groups = defaultdict(int)
    per_fn = defaultdict(lambda: defaultdict(int))
    fn_groups = defaultdict(lambda: defaultdict(int))
    for (ob, file, fn), ir in cost.items():
        g = group_of(ob, file, fn)
        groups[g] += ir
        per_fn[g][fn] += ir
        fn_groups[fn][g] += ir
    return groups, per_fn, fn_groups, edges


def charged(fn_groups, edges, base_fn_groups):
    """Ir per group with the shared groups' cost (std, other crates, allocator, libc) charged
    to the callers: a function's shared cost goes to its callers in proportion to the calls'
    inclusive cost, on up to the first caller with code of its own in non-shared groups,
    split in proportion to that code. `edges` are from the larger run; `base_fn_groups` is subtracted."""
    callers = defaultdict(list)
    for (caller, callee), ir in edges.items():
        if caller != callee and ir > 0:
            callers[callee].append((caller, ir))

    def owner(fn):
        """The non-shared groups of `fn`'s own code, as shares (None if it has none)."""
        own = {g: ir for g, ir in fn_groups.get(fn, {}).items() if g not in SHARED and ir > 0}
        total = sum(own.values())
        return {g: ir / total for g, ir in own.items()} if total else None

    memo = {}

    def dist(fn, seen):
        """Where one unit of shared cost in `fn` ends up: {group: share}."""
        if fn in memo:
            return memo[fn]
        o = owner(fn)
        if o is not None:
            return o
        cs = [(c, w) for c, w in callers.get(fn, []) if c not in seen]
        if not cs or len(seen) > 40:
            return None
        total = sum(w for _, w in cs)
        out = defaultdict(float)
        for c, w in cs:
            d = dist(c, seen | {fn})
            if d is None:
                continue
            for g, x in d.items():
                out[g] += x * w / total
        norm = sum(out.values())
        out = {g: x / norm for g, x in out.items()} if norm else None
        if len(seen) == 0:
            memo[fn] = out
        return out

    groups = defaultdict(float)
    for fn in set(fn_groups) | set(base_fn_groups):
        for g in set(fn_groups.get(fn, {})) | set(base_fn_groups.get(fn, {})):
            ir = fn_groups.get(fn, {}).get(g, 0) - base_fn_groups.get(fn, {}).get(g, 0)
            if g not in SHARED:
                groups[g] += ir
                continue
            d = dist(fn, frozenset())
            if d is None:
                groups[g] += ir
            else:
                for g2, x in d.items():
                    groups[g2] += ir * x
    return groups


def main():
    spec, n1, d1, n2, d2 = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
    g1, f1, fg1, _ = split(d1)
    g2, f2, fg2, edges = split(d2)
    c = charged(fg2, edges, fg1)
    n = n2 - n1
    total1, total2 = sum(g1.values()), sum(g2.values())
    total = total2 - total1
    print(f"{spec}: run 1 {n1} requests {total1} Ir, run 2 {n2} requests {total2} Ir "
          f"({total2 / n2:.0f} Ir/request with its {os.environ.get('CONNS', '16')} handshakes)")
    print(f"{spec}: (run 2 - run 1) / {n} requests = {total / n:.0f} Ir/request")
    print(f"  {'group':55s} {'self Ir/req':>11s} {'share':>6s} {'charged':>9s} {'share':>6s}")
    for g in GROUPS:
        d = g2[g] - g1[g]
        if g1[g] or g2[g] or c[g]:
            print(f"  {g:55s} {d / n:11.0f} {100 * d / total:5.1f}% {c[g] / n:9.0f} "
                  f"{100 * c[g] / total:5.1f}%")
    layer = (H3, GLUE, FIELDS, HTTP)
    own = sum(g2[g] - g1[g] for g in layer)
    print(f"  HTTP/3 layer (HTTP/3 + QPACK, QUIC glue, field checks, http crate): "
          f"{own / n:.0f} Ir/req self, {sum(c[g] for g in layer) / n:.0f} charged")
    qt = sum(g2[g] - g1[g] for g in (Q, T))
    print(f"  QUIC + TLS: {qt / n:.0f} Ir/req self, {sum(c[g] for g in (Q, T)) / n:.0f} charged "
          f"({100 * sum(c[g] for g in (Q, T)) / total:.1f}% of the total)")
    for g in (H3, GLUE, FIELDS, HANDLER, PEREGRINE, CRATES, STD, OTHER):
        print(f"  top functions in {g} (Ir/request, run 2 - run 1):")
        diff = {k: f2[g][k] - f1[g].get(k, 0) for k in f2[g]}
        for name, ir in sorted(diff.items(), key=lambda kv: -kv[1])[:8]:
            print(f"    {ir / n:8.1f}  {name[:160]}")


if __name__ == "__main__":
    main()
