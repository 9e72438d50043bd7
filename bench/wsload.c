/*
 * wsload: a WebSocket request/response load generator (what wrk is for HTTP).
 *
 *   wsload [-c CONNECTIONS] [-d SECONDS] [-t TIMEOUT] ws://HOST:PORT/PATH CYCLE_FILE
 *
 * One thread, one epoll loop, nonblocking sockets, so that the generator's own
 * cost per message stays far below the server's. Each connection plays the
 * cycle of CYCLE_FILE, one text message at a time: it sends a masked frame
 * (all-zero mask, allowed by RFC 6455, so masking costs nothing), waits for the
 * whole reply, checks it, and sends the next message until SECONDS are over.
 * Connection i starts at the i-th line flagged `b` (modulo their number).
 *
 * CYCLE_FILE: one message per line, tab-separated fields:
 *   FLAGS  MESSAGE  [CHECK ...]
 * FLAGS: `s` the message is a step (counted in steps/s), `b` a connection may
 * start here, `-` neither. Checks on the reply: `^TEXT` starts with TEXT
 * (whitespace ignored on both sides), `+TEXT` contains TEXT, `-TEXT` does not.
 *
 * Output: one JSON object on stdout. Latencies are per message, send to
 * complete reply (CLOCK_MONOTONIC), percentiles by nearest rank (as bench/stats.py).
 * errors = bad replies + failed handshakes + connections lost + replies timed out.
 * Never hangs: handshakes and the last replies each have TIMEOUT seconds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_FRAME ((uint64_t)1 << 30)
#define READ_ROOM 65536
#define WS_KEY "dGhlIHNhbXBsZSBub25jZQ==" /* fixed: the server's accept value is not checked */

enum check_kind { CHECK_PREFIX, CHECK_CONTAINS, CHECK_ABSENT };
struct check { enum check_kind kind; const char *text; size_t len; };
struct message { uint8_t *frame; size_t frame_len; bool is_step, is_start; struct check *checks; size_t n_checks; };
struct buffer { uint8_t *data; size_t len, cap; };

enum state { CONNECTING, HANDSHAKE, OPEN, IDLE, CLOSING, DEAD };
struct conn {
    int fd;
    enum state state;
    bool waiting, fragmented, want_write;
    size_t next, current;             /* cycle indexes: next to send, in flight */
    int64_t sent_ns;
    struct buffer out, in, fragments; /* in: bytes in [in_off, len) are not parsed yet */
    size_t out_off, in_off;
};

static struct message *cycle;
static size_t cycle_len;
static int epfd;
static int64_t run_deadline_ns, last_reply_ns;
static char handshake[2560];
static struct { uint64_t steps, messages, bad_replies, connect_failures, lost, timeouts; } counts;
static struct { int64_t *ns; size_t len, cap; } latencies;

static void die(const char *what) { perror(what); exit(2); }

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void reserve(struct buffer *b, size_t extra) {
    if (b->len + extra <= b->cap) return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra) cap *= 2;
    if (!(b->data = realloc(b->data, cap))) die("realloc");
    b->cap = cap;
}

static void append(struct buffer *b, const void *bytes, size_t n) {
    reserve(b, n);
    memcpy(b->data + b->len, bytes, n);
    b->len += n;
}

/* One final client frame with an all-zero mask: the payload goes out as is. */
static void append_frame(struct buffer *b, int opcode, const void *payload, size_t n) {
    uint8_t head[14] = {(uint8_t)(0x80 | opcode)};
    size_t h = 2;
    if (n < 126) {
        head[1] = (uint8_t)(0x80 | n);
    } else if (n < 65536) {
        head[1] = 0x80 | 126;
        head[2] = (uint8_t)(n >> 8), head[3] = (uint8_t)n, h = 4;
    } else {
        head[1] = 0x80 | 127;
        for (int i = 0; i < 8; i++) head[2 + i] = (uint8_t)((uint64_t)n >> (56 - 8 * i));
        h = 10;
    }
    append(b, head, h + 4); /* head[h..h+3] are zero: the mask */
    append(b, payload, n);
}

static void load_cycle(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) die(path);
    struct buffer text = {0};
    size_t n;
    do {
        reserve(&text, 65536);
        n = fread(text.data + text.len, 1, 65536, f);
        text.len += n;
    } while (n > 0);
    fclose(f);
    append(&text, "", 1);
    size_t cap = 16;
    if (!(cycle = malloc(cap * sizeof *cycle))) die("malloc");
    for (char *line = (char *)text.data, *end; *line; line = end + 1) {
        end = line + strcspn(line, "\n");
        bool last = *end == '\0';
        *end = '\0';
        if (*line) {
            if (cycle_len == cap && !(cycle = realloc(cycle, (cap *= 2) * sizeof *cycle))) die("realloc");
            struct message *m = &cycle[cycle_len++];
            memset(m, 0, sizeof *m);
            char *field = strsep(&line, "\t"), *body = strsep(&line, "\t");
            if (!body) { fprintf(stderr, "%s: message %zu has no text\n", path, cycle_len); exit(2); }
            m->is_step = strchr(field, 's') != NULL;
            m->is_start = strchr(field, 'b') != NULL;
            struct buffer frame = {0};
            append_frame(&frame, 0x1, body, strlen(body));
            m->frame = frame.data, m->frame_len = frame.len;
            while ((field = strsep(&line, "\t"))) {
                if (!field[0] || !strchr("^+-", field[0])) { fprintf(stderr, "%s: bad check '%s'\n", path, field); exit(2); }
                enum check_kind kind = field[0] == '^' ? CHECK_PREFIX : field[0] == '+' ? CHECK_CONTAINS : CHECK_ABSENT;
                if (!(m->checks = realloc(m->checks, (m->n_checks + 1) * sizeof *m->checks))) die("realloc");
                m->checks[m->n_checks++] = (struct check){kind, field + 1, strlen(field + 1)};
            }
        }
        if (last) break;
    }
    if (!cycle_len) { fprintf(stderr, "%s: no messages\n", path); exit(2); }
}

static bool is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static bool starts_with(const uint8_t *s, size_t n, const char *prefix, size_t len) {
    size_t i = 0;
    for (size_t j = 0; j < len; j++) {
        if (is_space((uint8_t)prefix[j])) continue;
        while (i < n && is_space(s[i])) i++;
        if (i == n || s[i] != (uint8_t)prefix[j]) return false;
        i++;
    }
    return true;
}

static bool reply_ok(const struct message *m, const uint8_t *reply, size_t n) {
    for (size_t i = 0; i < m->n_checks; i++) {
        const struct check *c = &m->checks[i];
        bool found = c->kind == CHECK_PREFIX ? starts_with(reply, n, c->text, c->len)
                                             : memmem(reply, n, c->text, c->len) != NULL;
        if (found != (c->kind != CHECK_ABSENT)) return false;
    }
    return true;
}

static void watch(struct conn *c, bool write) {
    struct epoll_event ev = {.events = EPOLLIN | (write ? EPOLLOUT : 0), .data.ptr = c};
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0) die("epoll_ctl");
    c->want_write = write;
}

/* A connection is given up: in the run it counts as lost, its pending reply too. */
static void drop(struct conn *c, bool error) {
    if (error) {
        if (c->state == CONNECTING || c->state == HANDSHAKE) counts.connect_failures++;
        else if (c->state != CLOSING) counts.lost++;
    }
    close(c->fd);
    c->state = DEAD;
    c->waiting = false;
}

static void flush(struct conn *c) {
    while (c->out_off < c->out.len) {
        ssize_t n = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!c->want_write) watch(c, true);
            return;
        }
        if (n < 0) { drop(c, true); return; }
        c->out_off += (size_t)n;
    }
    c->out.len = c->out_off = 0;
    if (c->want_write) watch(c, false);
}

static void send_next(struct conn *c) {
    const struct message *m = &cycle[c->next];
    c->current = c->next;
    c->next = (c->next + 1) % cycle_len;
    append(&c->out, m->frame, m->frame_len);
    c->waiting = true;
    c->sent_ns = now_ns();
    flush(c);
}

static void on_reply(struct conn *c, const uint8_t *reply, size_t n) {
    int64_t now = now_ns();
    if (!c->waiting) { counts.bad_replies++; return; } /* unsolicited: the protocol is request/response */
    const struct message *m = &cycle[c->current];
    if (latencies.len == latencies.cap) {
        latencies.cap = latencies.cap ? 2 * latencies.cap : 65536;
        if (!(latencies.ns = realloc(latencies.ns, latencies.cap * sizeof *latencies.ns))) die("realloc");
    }
    latencies.ns[latencies.len++] = now - c->sent_ns;
    counts.messages++;
    counts.steps += m->is_step;
    counts.bad_replies += !reply_ok(m, reply, n);
    last_reply_ns = now;
    c->waiting = false;
    if (now < run_deadline_ns) send_next(c);
    else c->state = IDLE;
}

static void on_frame(struct conn *c, int opcode, bool fin, const uint8_t *payload, size_t n) {
    if (opcode == 0x9) { append_frame(&c->out, 0xA, payload, n); flush(c); return; } /* ping */
    if (opcode == 0xA) return;                                                     /* pong */
    if (opcode == 0x8) { drop(c, true); return; }          /* close: in CLOSING, drop() counts nothing */
    if (c->state == CLOSING) return;
    if (opcode > 0x2 || (opcode == 0) != c->fragmented) { drop(c, true); return; } /* protocol error */
    if (fin && !c->fragmented) { on_reply(c, payload, n); return; }
    append(&c->fragments, payload, n);
    c->fragmented = !fin;
    if (fin) {
        on_reply(c, c->fragments.data, c->fragments.len);
        c->fragments.len = 0;
    }
}

static void parse_frames(struct conn *c) {
    size_t need = 0; /* bytes of the incomplete frame at the front, once known */
    while (c->state != DEAD) {
        uint8_t *p = c->in.data + c->in_off;
        size_t avail = c->in.len - c->in_off, head = 2;
        if (avail < 2) break;
        uint64_t n = p[1] & 0x7F;
        if (n == 126) {
            if (avail < 4) break;
            n = (uint64_t)p[2] << 8 | p[3], head = 4;
        } else if (n == 127) {
            if (avail < 10) break;
            n = 0;
            for (int i = 0; i < 8; i++) n = n << 8 | p[2 + i];
            head = 10;
        }
        if (n > MAX_FRAME) { drop(c, true); return; }
        bool masked = p[1] & 0x80; /* servers must not mask; tolerated */
        head += masked ? 4 : 0;
        if (avail < head + n) { need = head + n; break; }
        uint8_t *payload = p + head;
        if (masked) for (uint64_t i = 0; i < n; i++) payload[i] ^= p[head - 4 + i % 4];
        c->in_off += head + n;
        on_frame(c, p[0] & 0x0F, p[0] & 0x80, payload, n);
    }
    if (c->state == DEAD) return;
    size_t rest = c->in.len - c->in_off; /* move the unparsed tail to the front, with room for its frame */
    if (rest && c->in_off) memmove(c->in.data, c->in.data + c->in_off, rest);
    c->in.len = rest, c->in_off = 0;
    if (need > rest) reserve(&c->in, need - rest);
}

static void on_handshake(struct conn *c) {
    uint8_t *end = memmem(c->in.data, c->in.len, "\r\n\r\n", 4);
    if (!end) {
        if (c->in.len > 16384) drop(c, true);
        return;
    }
    char *space = memchr(c->in.data, ' ', (size_t)(end - c->in.data));
    if (!space || strncmp(space, " 101", 4) != 0 || (space[4] != ' ' && space[4] != '\r')) { drop(c, true); return; }
    c->in_off = (size_t)(end + 4 - c->in.data);
    c->state = OPEN;
    parse_frames(c);
}

static void on_event(struct conn *c, uint32_t events) {
    if (c->state == CONNECTING && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) { drop(c, true); return; }
        c->state = HANDSHAKE;
        append(&c->out, handshake, strlen(handshake));
    }
    if (events & EPOLLOUT) flush(c);
    if (c->state == DEAD || !(events & (EPOLLIN | EPOLLERR | EPOLLHUP))) return;
    if (c->in.cap - c->in.len < READ_ROOM / 4) reserve(&c->in, READ_ROOM);
    ssize_t n = recv(c->fd, c->in.data + c->in.len, c->in.cap - c->in.len, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) { drop(c, c->state != CLOSING); return; }
    c->in.len += (size_t)n;
    if (c->state == HANDSHAKE) on_handshake(c);
    else parse_frames(c);
}

static bool any_in(struct conn *conns, int count, bool (*pending)(const struct conn *)) {
    for (int i = 0; i < count; i++) if (pending(&conns[i])) return true;
    return false;
}
static bool connecting(const struct conn *c) { return c->state == CONNECTING || c->state == HANDSHAKE; }
static bool in_flight(const struct conn *c) { return c->state != DEAD && c->waiting; }
static bool closing(const struct conn *c) { return c->state == CLOSING; }

/* Run the loop until no connection is `pending` or `until_ns`; returns whether all finished. */
static bool loop(struct conn *conns, int count, bool (*pending)(const struct conn *), int64_t until_ns) {
    struct epoll_event events[256];
    while (any_in(conns, count, pending)) {
        int64_t left = until_ns - now_ns();
        if (left <= 0) return false;
        int ready = epoll_wait(epfd, events, 256, (int)((left + 999999) / 1000000));
        if (ready < 0 && errno != EINTR) die("epoll_wait");
        for (int i = 0; i < ready; i++) {
            struct conn *c = events[i].data.ptr;
            if (c->state != DEAD) on_event(c, events[i].events);
        }
    }
    return true;
}

static int compare_ns(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void print_ms(const char *name, double fraction) {
    if (!latencies.len) { printf(",\"%s\":null", name); return; }
    double exact = fraction * (double)latencies.len;
    size_t rank = (size_t)exact;
    rank += (double)rank < exact;
    printf(",\"%s\":%.3f", name, (double)latencies.ns[(rank ? rank : 1) - 1] / 1e6);
}

static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static void usage(void) {
    fprintf(stderr, "usage: wsload [-c CONNECTIONS] [-d SECONDS] [-t TIMEOUT] ws://HOST:PORT/PATH CYCLE_FILE\n");
    exit(2);
}

int main(int argc, char **argv) {
    int count = 16, opt;
    double seconds = 10, timeout = 10;
    while ((opt = getopt(argc, argv, "c:d:t:")) != -1) {
        if (opt == 'c') count = atoi(optarg);
        else if (opt == 'd') seconds = strtod(optarg, NULL);
        else if (opt == 't') timeout = strtod(optarg, NULL);
        else usage();
    }
    if (argc - optind != 2 || count < 1 || seconds <= 0 || timeout <= 0 || strncmp(argv[optind], "ws://", 5)) usage();
    char host[256] = "", port[16] = "80", path[2048] = "/";
    const char *url = argv[optind] + 5;
    size_t host_len = strcspn(url, ":/");
    if (host_len == 0 || host_len >= sizeof host) usage();
    memcpy(host, url, host_len);
    url += host_len;
    if (*url == ':') { size_t n = strcspn(++url, "/"); if (!n || n >= sizeof port) usage(); memcpy(port, url, n); port[n] = 0; url += n; }
    if (*url) snprintf(path, sizeof path, "%s", url);
    load_cycle(argv[optind + 1]);

    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *addr;
    if (getaddrinfo(host, port, &hints, &addr) != 0) { fprintf(stderr, "cannot resolve %s\n", host); return 2; }
    snprintf(handshake, sizeof handshake, "GET %s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: " WS_KEY "\r\nSec-WebSocket-Version: 13\r\n\r\n", path, host, port);
    size_t starts[4096], n_starts = 0;
    for (size_t i = 0; i < cycle_len && n_starts < 4096; i++) if (cycle[i].is_start) starts[n_starts++] = i;

    if ((epfd = epoll_create1(0)) < 0) die("epoll_create1");
    struct conn *conns = calloc((size_t)count, sizeof *conns);
    if (!conns) die("calloc");
    for (int i = 0; i < count; i++) {
        struct conn *c = &conns[i];
        c->next = n_starts ? starts[(size_t)i % n_starts] : (size_t)i % cycle_len;
        c->fd = socket(addr->ai_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
        if (c->fd < 0) die("socket");
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0) die("epoll_ctl");
        c->want_write = true;
        if (connect(c->fd, addr->ai_addr, addr->ai_addrlen) < 0 && errno != EINPROGRESS) drop(c, true);
    }
    freeaddrinfo(addr);
    loop(conns, count, connecting, now_ns() + (int64_t)(timeout * 1e9));
    for (int i = 0; i < count; i++) if (connecting(&conns[i])) drop(&conns[i], true);

    double cpu_start = cpu_seconds();
    int64_t start = now_ns();
    run_deadline_ns = start + (int64_t)(seconds * 1e9);
    last_reply_ns = start;
    for (int i = 0; i < count; i++) if (conns[i].state == OPEN) send_next(&conns[i]);
    loop(conns, count, in_flight, run_deadline_ns + (int64_t)(timeout * 1e9));
    for (int i = 0; i < count; i++) if (in_flight(&conns[i])) { counts.timeouts++; drop(&conns[i], false); }
    double elapsed = (double)(last_reply_ns - start) / 1e9, cpu = cpu_seconds() - cpu_start;

    uint8_t code[2] = {0x03, 0xE8}; /* close 1000, then wait briefly for the server's close */
    for (int i = 0; i < count; i++) {
        struct conn *c = &conns[i];
        if (c->state != OPEN && c->state != IDLE) continue;
        c->state = CLOSING;
        append_frame(&c->out, 0x8, code, 2);
        flush(c);
    }
    loop(conns, count, closing, now_ns() + 2000000000);
    for (int i = 0; i < count; i++) {
        if (conns[i].state != DEAD) drop(&conns[i], false);
        free(conns[i].out.data), free(conns[i].in.data), free(conns[i].fragments.data);
    }
    free(conns);

    if (latencies.len) qsort(latencies.ns, latencies.len, sizeof *latencies.ns, compare_ns);
    uint64_t errors = counts.bad_replies + counts.connect_failures + counts.lost + counts.timeouts;
    double rate = elapsed > 0 ? 1 / elapsed : 0;
    printf("{\"connections\":%d,\"steps\":%llu,\"messages\":%llu,\"errors\":%llu,\"bad_replies\":%llu,"
           "\"connect_failures\":%llu,\"lost\":%llu,\"timeouts\":%llu,\"elapsed_s\":%.6f,\"steps_per_s\":%.3f,"
           "\"messages_per_s\":%.3f,\"cpu_s\":%.6f,\"samples\":%zu",
           count, (unsigned long long)counts.steps, (unsigned long long)counts.messages, (unsigned long long)errors,
           (unsigned long long)counts.bad_replies, (unsigned long long)counts.connect_failures,
           (unsigned long long)counts.lost, (unsigned long long)counts.timeouts, elapsed,
           (double)counts.steps * rate, (double)counts.messages * rate, cpu, latencies.len);
    print_ms("p50_ms", 0.50);
    print_ms("p90_ms", 0.90);
    print_ms("p99_ms", 0.99);
    print_ms("max_ms", 1.0);
    printf("}\n");
    return 0;
}
