/* mcphost.h: write mcphost (and hyper-mcp v2) plugins in C.
 *
 * One header, no library: the Extism kernel imports (extism:host/env), the
 * MCP host functions (extism:host/user), input/output helpers, a growable
 * buffer that writes JSON, and a small JSON reader that finds a value by a
 * dotted key path ("request.arguments.text"). Build a WASI reactor:
 *
 *   clang --target=wasm32-wasi -mexec-model=reactor -O2 -o plugin.wasm plugin.c
 *
 * Every export is `int32_t f(void)`: read the JSON input with mcp_input,
 * write the JSON output with mcp_output, return 0. Return non-zero after
 * mcp_error to fail the call (the host turns that into an isError result).
 * The payloads are MCP's own shapes; see abi/README.md in mcphost.
 *
 * Input and output cross into the guest in one host call each through
 * mcphost's bulk copies (mcphost:host/io, abi.IONamespace in mcphost)
 * instead of one call per 8 bytes. A plain Extism host such as hyper-mcp
 * does not define that import and refuses to instantiate a module that
 * names it: build for one with -DMCP_EXTISM_ONLY, which copies 8 bytes a
 * call as Extism's own kernel does.
 */
#ifndef MCPHOST_H
#define MCPHOST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MCP_EXPORT(name) __attribute__((export_name(name)))

/* MCP_STATELESS, once at file scope, declares the plugin stateless: it
 * keeps nothing from one call to the next in its globals (state that must
 * last goes through mcp_kv_*), so mcphost serves it from a warm pool of
 * instances and runs its calls in parallel. Without it a plugin has one
 * long-lived instance and its calls wait their turn, as on hyper-mcp. The
 * declaration is the export mcphost_stateless, which is never called. */
#define MCP_STATELESS \
	MCP_EXPORT("mcphost_stateless") void mcp__stateless(void); \
	void mcp__stateless(void) {}
#define MCP_ENV(name) __attribute__((import_module("extism:host/env"), import_name(name)))
#define MCP_USER(name) __attribute__((import_module("extism:host/user"), import_name(name)))

/* ---- Extism kernel (extism:host/env) ---------------------------------- */

MCP_ENV("input_length") uint64_t extism_input_length(void);
MCP_ENV("input_offset") uint64_t extism_input_offset(void);
MCP_ENV("input_load_u8") uint32_t extism_input_load_u8(uint64_t);
MCP_ENV("input_load_u64") uint64_t extism_input_load_u64(uint64_t);
MCP_ENV("length") uint64_t extism_length(uint64_t);
MCP_ENV("alloc") uint64_t extism_alloc(uint64_t);
MCP_ENV("free") void extism_free(uint64_t);
MCP_ENV("output_set") void extism_output_set(uint64_t, uint64_t);
MCP_ENV("error_set") void extism_error_set(uint64_t);
MCP_ENV("store_u8") void extism_store_u8(uint64_t, uint32_t);
MCP_ENV("load_u8") uint32_t extism_load_u8(uint64_t);
MCP_ENV("store_u64") void extism_store_u64(uint64_t, uint64_t);
MCP_ENV("load_u64") uint64_t extism_load_u64(uint64_t);
MCP_ENV("config_get") uint64_t extism_config_get(uint64_t);
MCP_ENV("log_info") void extism_log_info(uint64_t);
MCP_ENV("log_warn") void extism_log_warn(uint64_t);
MCP_ENV("log_error") void extism_log_error(uint64_t);

/* ---- mcphost's bulk copies (mcphost:host/io) --------------------------- */
/* mcp_io_read copies up to n bytes of the kernel block at off into dst and
 * returns how many; mcp_io_write returns a new kernel block holding the n
 * bytes at src (0 when the kernel is out of memory). mcp_io_input copies
 * up to n bytes of the call's input to dst and returns the input's whole
 * length; mcp_io_output makes the n bytes at src the call's output (0; 1
 * when the kernel is out of memory). All answer "not supported" (-1, or 0
 * for write) on hosts that only stub them: the helpers below ask once (a
 * read of block 0) and copy 8 bytes a call after a -1. */

#ifndef MCP_EXTISM_ONLY
__attribute__((import_module("mcphost:host/io"), import_name("read"))) int32_t mcp_io_read(uint64_t off, void *dst, uint32_t n);
__attribute__((import_module("mcphost:host/io"), import_name("write"))) uint64_t mcp_io_write(const void *src, uint32_t n);
__attribute__((import_module("mcphost:host/io"), import_name("input"))) int64_t mcp_io_input(void *dst, uint32_t n);
__attribute__((import_module("mcphost:host/io"), import_name("output"))) int32_t mcp_io_output(const void *src, uint32_t n);

static int mcp__bulk; /* 1: the host copies in bulk; -1: it does not; 0: not asked yet */

static inline bool mcp__has_bulk(void) {
	if (mcp__bulk == 0) mcp__bulk = mcp_io_read(0, NULL, 0) < 0 ? -1 : 1;
	return mcp__bulk > 0;
}
#else
static inline bool mcp__has_bulk(void) { return false; }
static inline int32_t mcp_io_read(uint64_t off, void *dst, uint32_t n) { (void)off, (void)dst, (void)n; return -1; }
static inline uint64_t mcp_io_write(const void *src, uint32_t n) { (void)src, (void)n; return 0; }
static inline int64_t mcp_io_input(void *dst, uint32_t n) { (void)dst, (void)n; return -1; }
static inline int32_t mcp_io_output(const void *src, uint32_t n) { (void)src, (void)n; return -1; }
#endif

/* ---- mcphost's call status (mcphost:host/call) -------------------------- */
/* mcp_cancelled returns true once the client has cancelled the call being
 * served (notifications/cancelled, a closed connection). The host then
 * gives the call the plugin's cancel_grace (1 s unless set) to return: a
 * plugin that returns in time keeps its instance, and its globals; one
 * still running after it is stopped and its instance replaced. Ask it in
 * long loops; it is one cheap host call. Imported only when used; with
 * MCP_EXTISM_ONLY it is always false. */

#ifndef MCP_EXTISM_ONLY
__attribute__((import_module("mcphost:host/call"), import_name("cancelled"))) int32_t mcp__host_cancelled(void);
static inline bool mcp_cancelled(void) { return mcp__host_cancelled() == 1; }
#else
static inline bool mcp_cancelled(void) { return false; }
#endif

/* mcp__copied is how many bytes a bulk read copied; the 8-byte loop copies
 * the rest. */
static inline size_t mcp__copied(int32_t n) { return n > 0 ? (size_t)n : 0; }

/* ---- MCP host functions (extism:host/user) ----------------------------- */
/* Each takes the kernel offset of a JSON payload (see mcp_kernel_put) and,
 * for requests, returns the offset of the JSON reply (see mcp_kernel_get).
 * A reply {"error":"…"} means the host could not serve the request. */

MCP_USER("notify_logging_message") void mcp_host_notify_logging_message(uint64_t);
MCP_USER("notify_progress") void mcp_host_notify_progress(uint64_t);
MCP_USER("create_message") uint64_t mcp_host_create_message(uint64_t);
MCP_USER("create_elicitation") uint64_t mcp_host_create_elicitation(uint64_t);
MCP_USER("list_roots") uint64_t mcp_host_list_roots(void);
MCP_USER("notify_tool_list_changed") void mcp_host_notify_tool_list_changed(void);
MCP_USER("notify_prompt_list_changed") void mcp_host_notify_prompt_list_changed(void);
MCP_USER("notify_resource_list_changed") void mcp_host_notify_resource_list_changed(void);
MCP_USER("notify_resource_updated") void mcp_host_notify_resource_updated(uint64_t);
/* The plugin's key-value state (mcp_kv_*); imported only when used. */
MCP_USER("kv") uint64_t mcp_host_kv(uint64_t);
/* Outbound HTTP (mcp_http); imported only when used. */
MCP_USER("http") uint64_t mcp_host_http(uint64_t);

/* ---- bytes in and out --------------------------------------------------- */

/* mcp_kernel_put copies n bytes into a new block of kernel memory and
 * returns its offset (the caller, or the host it is handed to, owns it). */
static inline uint64_t mcp_kernel_put(const char *p, size_t n) {
	if (n > 0 && n <= UINT32_MAX && mcp__has_bulk()) return mcp_io_write(p, (uint32_t)n);
	uint64_t off = extism_alloc(n);
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t v;
		memcpy(&v, p + i, 8);
		extism_store_u64(off + i, v);
	}
	for (; i < n; i++) extism_store_u8(off + i, (uint8_t)p[i]);
	return off;
}

/* mcp_kernel_get copies the kernel block at off into a NUL-terminated
 * malloc'd string, frees the block, and stores its length in *n (if n is
 * not NULL). It returns NULL for offset 0. */
static inline char *mcp_kernel_get(uint64_t off, size_t *n) {
	if (off == 0) return NULL;
	size_t len = (size_t)extism_length(off);
	char *buf = malloc(len + 1);
	if (!buf) return NULL;
	size_t i = 0;
	if (len > 0 && len <= UINT32_MAX && mcp__has_bulk()) i = mcp__copied(mcp_io_read(off, buf, (uint32_t)len));
	for (; i + 8 <= len; i += 8) {
		uint64_t v = extism_load_u64(off + i);
		memcpy(buf + i, &v, 8);
	}
	for (; i < len; i++) buf[i] = (char)extism_load_u8(off + i);
	buf[len] = 0;
	extism_free(off);
	if (n) *n = len;
	return buf;
}

/* mcp__input_to reads the call's input into *buf (of *cap bytes; grown,
 * or made when *buf is NULL) followed by a NUL, and stores its length in
 * *n; false when memory runs out (*buf is then still the caller's to
 * free). With the bulk copies it takes one host call when the input fits,
 * two otherwise. */
static inline bool mcp__input_to(char **buf, size_t *cap, size_t *n) {
	if (!*buf) {
		if (!(*buf = malloc(1024))) return false;
		*cap = 1024;
	}
	int64_t len = mcp__has_bulk() ? mcp_io_input(*buf, (uint32_t)(*cap - 1)) : -1;
	if (len < 0 || (uint64_t)len >= UINT32_MAX) len = (int64_t)extism_input_length();
	else if ((uint64_t)len < *cap) {
		(*buf)[len] = 0;
		*n = (size_t)len;
		return true;
	}
	if ((uint64_t)len >= *cap) {
		char *big = realloc(*buf, (size_t)len + 1);
		if (!big) return false;
		*buf = big;
		*cap = (size_t)len + 1;
	}
	size_t i = 0;
	if (len > 0 && mcp__has_bulk() && mcp_io_input(*buf, (uint32_t)len) == len) i = (size_t)len;
	for (; i + 8 <= (size_t)len; i += 8) {
		uint64_t v = extism_input_load_u64(i);
		memcpy(*buf + i, &v, 8);
	}
	for (; i < (size_t)len; i++) (*buf)[i] = (char)extism_input_load_u8(i);
	(*buf)[len] = 0;
	*n = (size_t)len;
	return true;
}

/* mcp_input returns the call's input as a NUL-terminated malloc'd string
 * (its length in *n when n is not NULL), or NULL when memory runs out. */
static inline char *mcp_input(size_t *n) {
	char *buf = NULL;
	size_t cap = 0, len;
	if (!mcp__input_to(&buf, &cap, &len)) {
		free(buf);
		return NULL;
	}
	if (n) *n = len;
	return buf;
}

/* mcp_output sets the call's output: with the bulk copies, in one host
 * call. */
static inline void mcp_output(const char *p, size_t n) {
	/* 1 (out of memory) leaves no output, as output_set of a failed block does. */
	if (n > 0 && n <= UINT32_MAX && mcp__has_bulk() && mcp_io_output(p, (uint32_t)n) >= 0) return;
	extism_output_set(mcp_kernel_put(p, n), n);
}

/* mcp_error sets the call's error; the export should then return 1. */
static inline void mcp_error(const char *msg) { extism_error_set(mcp_kernel_put(msg, strlen(msg))); }

/* ---- JSON writing ------------------------------------------------------- */

/* mcp_buf is a growable byte buffer; the zero value is empty and ready. A
 * failed allocation sets oom and turns later writes into no-ops. */
typedef struct {
	char *p;
	size_t len, cap;
	bool oom;
} mcp_buf;

/* mcp__buf_room makes room for n more bytes and the NUL after them; false
 * (and oom set) when it cannot. */
static inline bool mcp__buf_room(mcp_buf *b, size_t n) {
	if (b->oom) return false;
	if (n < b->cap - b->len) return true; /* cap > len always once allocated */
	if (n > SIZE_MAX / 2 - b->len) {
		b->oom = true;
		return false;
	}
	size_t cap = b->cap ? b->cap * 2 : 256;
	while (cap < b->len + n + 1) cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

static inline void mcp_buf_write(mcp_buf *b, const char *s, size_t n) {
	if (!mcp__buf_room(b, n)) return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static inline void mcp_buf_puts(mcp_buf *b, const char *s) { mcp_buf_write(b, s, strlen(s)); }

/* mcp_buf_uint and mcp_buf_int write an integer as JSON does, without
 * printf's cost (a call of snprintf is most of a small tool's time). */
static inline void mcp_buf_uint(mcp_buf *b, uint64_t v) {
	char d[20];
	size_t i = sizeof d;
	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	mcp_buf_write(b, d + i, sizeof d - i);
}

static inline void mcp_buf_int(mcp_buf *b, int64_t v) {
	if (v < 0) {
		mcp_buf_write(b, "-", 1);
		mcp_buf_uint(b, (uint64_t)0 - (uint64_t)v);
		return;
	}
	mcp_buf_uint(b, (uint64_t)v);
}

static inline void mcp_buf_printf(mcp_buf *b, const char *fmt, ...) {
	char tmp[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0) return;
	if ((size_t)n < sizeof tmp) {
		mcp_buf_write(b, tmp, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big) {
		b->oom = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	mcp_buf_write(b, big, (size_t)n);
	free(big);
}

/* mcp_buf_json_string writes s (UTF-8, n bytes) as a quoted JSON string.
 * It makes room for the longest escaping of a stretch of s first (6 bytes
 * a control character), then writes the stretch's bytes in place. */
static inline void mcp_buf_json_string(mcp_buf *b, const char *s, size_t n) {
	static const char hex[] = "0123456789abcdef";
	mcp_buf_write(b, "\"", 1);
	for (size_t i = 0; i < n;) {
		size_t end = n - i < 4096 ? n : i + 4096;
		if (!mcp__buf_room(b, 6 * (end - i))) return;
		char *o = b->p + b->len;
		for (; i < end; i++) {
			unsigned char c = (unsigned char)s[i];
			if (c >= 0x20 && c != '"' && c != '\\') {
				*o++ = (char)c;
				continue;
			}
			*o++ = '\\';
			switch (c) {
			case '"': *o++ = '"'; break;
			case '\\': *o++ = '\\'; break;
			case '\n': *o++ = 'n'; break;
			case '\r': *o++ = 'r'; break;
			case '\t': *o++ = 't'; break;
			default:
				*o++ = 'u', *o++ = '0', *o++ = '0';
				*o++ = hex[c >> 4], *o++ = hex[c & 15];
			}
		}
		b->len = (size_t)(o - b->p);
	}
	mcp_buf_write(b, "\"", 1);
}

/* mcp_buf_output sets the buffer as the call's output (or an error when an
 * allocation failed), frees it and returns the export's result code. */
static inline int32_t mcp_buf_output(mcp_buf *b) {
	int32_t rc = 0;
	if (b->oom) {
		mcp_error("out of memory");
		rc = 1;
	} else {
		mcp_output(b->p ? b->p : "", b->len);
	}
	free(b->p);
	*b = (mcp_buf){0};
	return rc;
}

/* ---- JSON reading ------------------------------------------------------- */

/* mcp_json is a span of raw JSON text: one value, as it appears in the
 * input. A zero span (p == NULL) means "absent". */
typedef struct {
	const char *p;
	size_t n;
} mcp_json;

static inline const char *mcp__ws(const char *s, const char *end) {
	while (s < end && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) s++;
	return s;
}

/* mcp__skip returns the end of the value starting at s, or NULL when the
 * text is not valid JSON there. Nesting deeper than 256 levels is refused. */
static inline const char *mcp__skip(const char *s, const char *end, int depth) {
	s = mcp__ws(s, end);
	if (s >= end || depth > 256) return NULL;
	switch (*s) {
	case '"':
		for (s++; s < end; s++) {
			if (*s == '\\') {
				s++;
			} else if (*s == '"') {
				return s + 1;
			} else if ((unsigned char)*s < 0x20) {
				return NULL;
			}
		}
		return NULL;
	case '{':
	case '[': {
		char close = *s == '{' ? '}' : ']';
		bool obj = *s == '{';
		s = mcp__ws(s + 1, end);
		if (s < end && *s == close) return s + 1;
		for (;;) {
			if (obj) {
				s = mcp__ws(s, end);
				if (s >= end || *s != '"') return NULL;
				s = mcp__skip(s, end, depth + 1);
				if (!s) return NULL;
				s = mcp__ws(s, end);
				if (s >= end || *s != ':') return NULL;
				s++;
			}
			s = mcp__skip(s, end, depth + 1);
			if (!s) return NULL;
			s = mcp__ws(s, end);
			if (s >= end) return NULL;
			if (*s == close) return s + 1;
			if (*s != ',') return NULL;
			s++;
		}
	}
	default: {
		const char *start = s;
		while (s < end && (*s == '-' || *s == '+' || *s == '.' || (*s >= '0' && *s <= '9') ||
		                   (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
			s++;
		return s > start ? s : NULL;
	}
	}
}

/* mcp_json_get finds the value at path, a dot-separated list of object
 * keys ("" is the value itself), in the JSON text in. Keys are compared
 * byte for byte, without unescaping. */
static inline mcp_json mcp_json_get(mcp_json in, const char *path) {
	const char *s = in.p, *end = in.p + in.n;
	if (!s) return (mcp_json){0};
	while (*path) {
		const char *dot = strchr(path, '.');
		size_t klen = dot ? (size_t)(dot - path) : strlen(path);
		s = mcp__ws(s, end);
		if (s >= end || *s != '{') return (mcp_json){0};
		s = mcp__ws(s + 1, end);
		bool found = false;
		while (s < end && *s == '"') {
			const char *kend = mcp__skip(s, end, 0);
			if (!kend) return (mcp_json){0};
			bool match = (size_t)(kend - s - 2) == klen && memcmp(s + 1, path, klen) == 0;
			s = mcp__ws(kend, end);
			if (s >= end || *s != ':') return (mcp_json){0};
			s = mcp__ws(s + 1, end);
			if (match) {
				found = true;
				break;
			}
			s = mcp__skip(s, end, 0);
			if (!s) return (mcp_json){0};
			s = mcp__ws(s, end);
			if (s < end && *s == ',') s = mcp__ws(s + 1, end);
		}
		if (!found) return (mcp_json){0};
		path += klen + (dot ? 1 : 0);
	}
	const char *vend = mcp__skip(s, end, 0);
	if (!vend) return (mcp_json){0};
	s = mcp__ws(s, end);
	return (mcp_json){s, (size_t)(vend - s)};
}

static inline void mcp__utf8(mcp_buf *b, uint32_t r) {
	char u[4];
	size_t n;
	if (r < 0x80) {
		u[0] = (char)r, n = 1;
	} else if (r < 0x800) {
		u[0] = (char)(0xC0 | r >> 6), u[1] = (char)(0x80 | (r & 0x3F)), n = 2;
	} else if (r < 0x10000) {
		u[0] = (char)(0xE0 | r >> 12), u[1] = (char)(0x80 | (r >> 6 & 0x3F)), u[2] = (char)(0x80 | (r & 0x3F)), n = 3;
	} else {
		u[0] = (char)(0xF0 | r >> 18), u[1] = (char)(0x80 | (r >> 12 & 0x3F)), u[2] = (char)(0x80 | (r >> 6 & 0x3F)),
		u[3] = (char)(0x80 | (r & 0x3F)), n = 4;
	}
	mcp_buf_write(b, u, n);
}

static inline int mcp__hex4(const char *s, const char *end, uint32_t *r) {
	if (end - s < 4) return 0;
	*r = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		*r <<= 4;
		if (c >= '0' && c <= '9') *r |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f') *r |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F') *r |= (uint32_t)(c - 'A' + 10);
		else return 0;
	}
	return 1;
}

/* mcp_json_string decodes a JSON string into a NUL-terminated malloc'd
 * string (its length in *n when n is not NULL). It returns NULL when v is
 * absent or not a string. */
static inline char *mcp_json_string(mcp_json v, size_t *n) {
	if (!v.p || v.n < 2 || v.p[0] != '"') return NULL;
	mcp_buf b = {0};
	mcp_buf_write(&b, "", 0);
	const char *s = v.p + 1, *end = v.p + v.n - 1;
	while (s < end) {
		const char *run = s;
		while (s < end && *s != '\\') s++;
		mcp_buf_write(&b, run, (size_t)(s - run));
		if (s >= end) break;
		if (++s >= end) goto bad;
		char c = *s++;
		switch (c) {
		case '"': case '\\': case '/': mcp_buf_write(&b, &c, 1); break;
		case 'b': mcp_buf_puts(&b, "\b"); break;
		case 'f': mcp_buf_puts(&b, "\f"); break;
		case 'n': mcp_buf_puts(&b, "\n"); break;
		case 'r': mcp_buf_puts(&b, "\r"); break;
		case 't': mcp_buf_puts(&b, "\t"); break;
		case 'u': {
			uint32_t r, lo;
			if (!mcp__hex4(s, end, &r)) goto bad;
			s += 4;
			if (r >= 0xD800 && r < 0xDC00 && end - s >= 6 && s[0] == '\\' && s[1] == 'u' &&
			    mcp__hex4(s + 2, end, &lo) && lo >= 0xDC00 && lo < 0xE000) {
				r = 0x10000 + ((r - 0xD800) << 10) + (lo - 0xDC00);
				s += 6;
			} else if (r >= 0xD800 && r < 0xE000) {
				r = 0xFFFD;
			}
			mcp__utf8(&b, r);
			break;
		}
		default: goto bad;
		}
	}
	if (b.oom) goto bad;
	if (n) *n = b.len;
	return b.p;
bad:
	free(b.p);
	return NULL;
}

/* mcp_json_number decodes a JSON number; it returns false when v is
 * absent or not a number. */
static inline bool mcp_json_number(mcp_json v, double *out) {
	if (!v.p || v.n == 0 || v.n > 63) return false;
	char tmp[64];
	memcpy(tmp, v.p, v.n);
	tmp[v.n] = 0;
	char *end;
	*out = strtod(tmp, &end);
	return end == tmp + v.n;
}

/* mcp_json_is reports whether v is exactly the literal lit ("true", "null"…). */
static inline bool mcp_json_is(mcp_json v, const char *lit) {
	return v.p && v.n == strlen(lit) && memcmp(v.p, lit, v.n) == 0;
}

/* ---- tool calls ---------------------------------------------------------- */
/* A tool call reaches a plugin through one of two exports. hyper-mcp (and
 * any plain Extism host) calls call_tool with a JSON envelope,
 * {"request":{"name":…,"arguments":…},"context":{…}}. mcphost calls
 * mcphost_call_tool instead when the plugin exports it (ABI version 2):
 * its input is the parts of the request mcphost has already parsed, each
 * behind a little-endian uint32 length (the name, the context's id,
 * _meta, protocolVersion and plugin), then the arguments to the end
 * (abi.CallFrame), so the plugin finds each by its length and scans
 * nothing but the arguments. MCP_TOOLS(handler) defines both; the handler
 * sees the same mcp_call either way. */

/* mcp_str is a span of plain text (not JSON), not NUL-terminated. */
typedef struct {
	const char *p;
	size_t n;
} mcp_str;

/* mcp_str_is reports whether s is exactly the text lit. */
static inline bool mcp_str_is(mcp_str s, const char *lit) { return s.n == strlen(lit) && memcmp(s.p, lit, s.n) == 0; }

/* mcp_call is one tool call: the tool's name, its arguments (raw JSON, a
 * zero span when the client sent none) and its context (id and _meta raw
 * JSON, the two others plain text). Every span points into the call's
 * input and lasts until the handler returns. */
typedef struct {
	mcp_str name;
	mcp_json arguments;
	mcp_json id, meta;
	mcp_str protocol_version, plugin;
} mcp_call;

static inline uint32_t mcp__le32(const char *p) {
	const unsigned char *u = (const unsigned char *)p;
	return (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
}

/* mcp_call_frame splits in[0:n], a call frame, into *c (each span a slice
 * of in); false when a length runs past the end of in. */
static inline bool mcp_call_frame(const char *in, size_t n, mcp_call *c) {
	mcp_str str[5];
	for (int i = 0; i < 5; i++) {
		if (n < 4) return false;
		uint32_t len = mcp__le32(in);
		in += 4, n -= 4;
		if (len > n) return false;
		str[i] = (mcp_str){in, len};
		in += len, n -= len;
	}
	c->name = str[0];
	c->id = (mcp_json){str[1].n ? str[1].p : NULL, str[1].n};
	c->meta = (mcp_json){str[2].n ? str[2].p : NULL, str[2].n};
	c->protocol_version = str[3];
	c->plugin = str[4];
	c->arguments = (mcp_json){n ? in : NULL, n};
	return true;
}

/* mcp__members finds, in one pass over the object obj, the value of each
 * member named in keys[0:n] (the first of duplicates, as mcp_json_get
 * does), stored in vals; an absent member, or one the pass did not reach
 * in text that is not JSON, is a zero span. */
static inline void mcp__members(mcp_json obj, const char *const keys[], mcp_json vals[], int n) {
	for (int i = 0; i < n; i++) vals[i] = (mcp_json){0};
	const char *s = obj.p, *end = obj.p + obj.n;
	if (!s) return;
	s = mcp__ws(s, end);
	if (s >= end || *s != '{') return;
	s = mcp__ws(s + 1, end);
	while (s < end && *s == '"') {
		const char *kend = mcp__skip(s, end, 0);
		if (!kend) return;
		const char *key = s + 1;
		size_t klen = (size_t)(kend - s - 2);
		s = mcp__ws(kend, end);
		if (s >= end || *s != ':') return;
		s = mcp__ws(s + 1, end);
		const char *vend = mcp__skip(s, end, 0);
		if (!vend) return;
		for (int i = 0; i < n; i++) {
			if (!vals[i].p && strlen(keys[i]) == klen && memcmp(keys[i], key, klen) == 0) vals[i] = (mcp_json){s, (size_t)(vend - s)};
		}
		s = mcp__ws(vend, end);
		if (s < end && *s == ',') s = mcp__ws(s + 1, end);
	}
}

/* mcp__envelope_str is the string v: a slice of the input when it has no
 * escape (the usual case), else a malloc'd decoded copy that *owned keeps
 * for the caller to free. */
static inline mcp_str mcp__envelope_str(mcp_json v, char **owned) {
	if (!v.p || v.n < 2 || v.p[0] != '"') return (mcp_str){"", 0};
	if (!memchr(v.p, '\\', v.n)) return (mcp_str){v.p + 1, v.n - 2};
	size_t n = 0;
	*owned = mcp_json_string(v, &n);
	return (mcp_str){*owned ? *owned : "", *owned ? n : 0};
}

/* mcp__call_envelope reads the call_tool envelope env into *c, in one
 * pass over each of its objects; the strings it had to decode go into
 * owned[0:3], for the caller to free. */
static inline void mcp__call_envelope(mcp_json env, mcp_call *c, char *owned[3]) {
	static const char *const top[] = {"request", "context"}, *const reqk[] = {"name", "arguments"},
	                         *const ctxk[] = {"id", "_meta", "protocolVersion", "plugin"};
	mcp_json t[2], r[2], x[4];
	mcp__members(env, top, t, 2);
	mcp__members(t[0], reqk, r, 2);
	mcp__members(t[1], ctxk, x, 4);
	*c = (mcp_call){
	    .name = mcp__envelope_str(r[0], &owned[0]),
	    .arguments = r[1],
	    .id = x[0],
	    .meta = x[1],
	    .protocol_version = mcp__envelope_str(x[2], &owned[1]),
	    .plugin = mcp__envelope_str(x[3], &owned[2]),
	};
}

/* mcp__in is the input buffer mcp__serve reuses from call to call (an
 * instance serves one call at a time); one that grew past 64 KiB is freed
 * after its call, so a large input does not stay resident. */
static char *mcp__in;
static size_t mcp__in_cap;

/* mcp__serve serves a tool call: it reads the input, a call frame when
 * frame is true (mcphost_call_tool) and call_tool's envelope otherwise,
 * into an mcp_call and runs handler. */
static inline int32_t mcp__serve(int32_t (*handler)(const mcp_call *), bool frame) {
	size_t n;
	if (!mcp__input_to(&mcp__in, &mcp__in_cap, &n)) {
		free(mcp__in);
		mcp__in = NULL;
		mcp_error("out of memory");
		return 1;
	}
	char *in = mcp__in;
	mcp_call c;
	char *owned[3] = {NULL, NULL, NULL};
	int32_t rc;
	if (!frame) {
		mcp__call_envelope((mcp_json){in, n}, &c, owned);
		rc = handler(&c);
	} else if (mcp_call_frame(in, n, &c)) {
		rc = handler(&c);
	} else {
		mcp_error("mcphost_call_tool: the input is not a call frame");
		rc = 1;
	}
	for (int i = 0; i < 3; i++) free(owned[i]);
	if (mcp__in_cap > 64 << 10) {
		free(mcp__in);
		mcp__in = NULL;
	}
	return rc;
}

/* MCP_TOOLS(handler), once at file scope, serves tool calls with
 * int32_t handler(const mcp_call *call), through call_tool and
 * mcphost_call_tool (above). Return as an export does: 0 after setting
 * the output (a CallToolResult), 1 after mcp_error. A plugin built with
 * it reports ABI version 2 from mcphost_abi_version. */
#define MCP_TOOLS(handler) \
	MCP_EXPORT("call_tool") int32_t mcp__call_tool(void); \
	int32_t mcp__call_tool(void) { return mcp__serve(handler, false); } \
	MCP_EXPORT("mcphost_call_tool") int32_t mcp__call_tool_frame(void); \
	int32_t mcp__call_tool_frame(void) { return mcp__serve(handler, true); }

/* ---- conveniences ------------------------------------------------------- */

/* mcp_log sends notifications/message to the client at level ("debug",
 * "info", "warning", "error", …) with text as its data. */
static inline void mcp_log(const char *level, const char *text) {
	mcp_buf b = {0};
	mcp_buf_puts(&b, "{\"level\":");
	mcp_buf_json_string(&b, level, strlen(level));
	mcp_buf_puts(&b, ",\"data\":");
	mcp_buf_json_string(&b, text, strlen(text));
	mcp_buf_puts(&b, "}");
	if (!b.oom) mcp_host_notify_logging_message(mcp_kernel_put(b.p, b.len));
	free(b.p);
}

/* mcp_text_result writes a CallToolResult holding one text block. */
static inline int32_t mcp_text_result(const char *text, bool is_error) {
	mcp_buf b = {0};
	mcp_buf_puts(&b, "{\"content\":[{\"type\":\"text\",\"text\":");
	mcp_buf_json_string(&b, text, strlen(text));
	mcp_buf_puts(&b, is_error ? "}],\"isError\":true}" : "}]}");
	return mcp_buf_output(&b);
}

/* ---- base64 (the kv host function's values) ------------------------------ */

static const char mcp__b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* mcp_buf_base64 writes the standard base64 of p[0:n], padded. */
static inline void mcp_buf_base64(mcp_buf *b, const char *p, size_t n) {
	const unsigned char *u = (const unsigned char *)p;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)u[i] << 16 | (i + 1 < n ? (uint32_t)u[i + 1] << 8 : 0) | (i + 2 < n ? u[i + 2] : 0);
		char q[4] = {mcp__b64[v >> 18 & 63], mcp__b64[v >> 12 & 63], i + 1 < n ? mcp__b64[v >> 6 & 63] : '=', i + 2 < n ? mcp__b64[v & 63] : '='};
		mcp_buf_write(b, q, 4);
	}
}

/* mcp_base64_decode decodes s[0:n] (standard, padded) into a malloc'd
 * buffer and stores its length in *out; NULL when it is not base64. */
static inline char *mcp_base64_decode(const char *s, size_t n, size_t *out) {
	if (n % 4) return NULL;
	char *buf = malloc(n / 4 * 3 + 1);
	if (!buf) return NULL;
	size_t len = 0;
	for (size_t i = 0; i < n; i += 4) {
		uint32_t v = 0;
		int pad = 0;
		for (int j = 0; j < 4; j++) {
			const char *c = s[i + j] == '=' ? NULL : memchr(mcp__b64, s[i + j], 64);
			if (!c && (s[i + j] != '=' || i + 4 < n || j < 2)) {
				free(buf);
				return NULL;
			}
			if (!c) pad++;
			v = v << 6 | (c ? (uint32_t)(c - mcp__b64) : 0);
		}
		buf[len++] = (char)(v >> 16);
		if (pad < 2) buf[len++] = (char)(v >> 8);
		if (pad < 1) buf[len++] = (char)v;
	}
	buf[len] = 0;
	*out = len;
	return buf;
}

/* ---- key-value state ------------------------------------------------------ */
/* The plugin's own key-value state, kept by mcphost in its store: shared
 * by every replica of the server ([server] store) and outliving restarts.
 * Memory (globals) stays per instance and per replica. Each function
 * returns true on success; on failure *err (when err is not NULL) is a
 * malloc'd message naming the store (it is down, a quota is reached):
 * return it as the tool's error, never as an empty value. */

/* mcp__kv sends the request in b (the JSON object without its closing
 * brace) and returns the reply, or NULL with *err set. */
static inline char *mcp__kv(mcp_buf *b, size_t *n, char **err) {
	mcp_buf_puts(b, "}");
	if (err) *err = NULL;
	char *reply = b->oom ? NULL : mcp_kernel_get(mcp_host_kv(mcp_kernel_put(b->p, b->len)), n);
	free(b->p);
	if (!reply) {
		static const char msg[] = "kv: no reply from the host";
		if (err && (*err = malloc(sizeof msg)) != NULL) memcpy(*err, msg, sizeof msg);
		return NULL;
	}
	char *e = mcp_json_string(mcp_json_get((mcp_json){reply, *n}, "error"), NULL);
	if (e) {
		free(reply);
		if (err) *err = e; else free(e);
		return NULL;
	}
	return reply;
}

static inline void mcp__kv_op(mcp_buf *b, const char *op, const char *key) {
	mcp_buf_printf(b, "{\"op\":\"%s\",\"key\":", op);
	mcp_buf_json_string(b, key, strlen(key));
}

/* mcp_kv_get reads key: *value is a malloc'd copy (NUL-terminated, length
 * in *n) and *found whether it is set. */
static inline bool mcp_kv_get(const char *key, char **value, size_t *n, bool *found, char **err) {
	mcp_buf b = {0};
	mcp__kv_op(&b, "get", key);
	size_t rn;
	char *reply = mcp__kv(&b, &rn, err);
	if (!reply) return false;
	mcp_json r = {reply, rn};
	*found = mcp_json_is(mcp_json_get(r, "found"), "true");
	size_t en = 0;
	char *enc = mcp_json_string(mcp_json_get(r, "value"), &en);
	*value = mcp_base64_decode(enc ? enc : "", enc ? en : 0, n);
	free(enc);
	free(reply);
	return *value != NULL;
}

/* mcp_kv_set sets key to value[0:n]. */
static inline bool mcp_kv_set(const char *key, const char *value, size_t n, char **err) {
	mcp_buf b = {0};
	mcp__kv_op(&b, "set", key);
	mcp_buf_puts(&b, ",\"value\":\"");
	mcp_buf_base64(&b, value, n);
	mcp_buf_puts(&b, "\"");
	size_t rn;
	char *reply = mcp__kv(&b, &rn, err);
	free(reply);
	return reply != NULL;
}

/* mcp_kv_delete removes key (a key that is not set is no error). */
static inline bool mcp_kv_delete(const char *key, char **err) {
	mcp_buf b = {0};
	mcp__kv_op(&b, "delete", key);
	size_t rn;
	char *reply = mcp__kv(&b, &rn, err);
	free(reply);
	return reply != NULL;
}

/* mcp_kv_increment adds delta to the integer at key (absent counts as 0)
 * and stores the sum in *sum: atomic across replicas. */
static inline bool mcp_kv_increment(const char *key, int64_t delta, int64_t *sum, char **err) {
	mcp_buf b = {0};
	mcp__kv_op(&b, "increment", key);
	mcp_buf_printf(&b, ",\"delta\":%lld", (long long)delta);
	size_t rn;
	char *reply = mcp__kv(&b, &rn, err);
	if (!reply) return false;
	mcp_json v = mcp_json_get((mcp_json){reply, rn}, "number"); /* absent: 0 */
	char num[24] = "0";
	if (v.p && v.n < sizeof num) {
		memcpy(num, v.p, v.n);
		num[v.n] = 0;
	}
	*sum = strtoll(num, NULL, 10);
	free(reply);
	return true;
}

/* ---- outbound HTTP ------------------------------------------------------- */
/* mcp_http sends a request through mcphost's http host function, under the
 * plugin's allowed_hosts, may_request_hosts and response-size limit.
 * method NULL means GET; headers is NULL or a JSON object of strings
 * ("{\"accept\":\"text/plain\"}"); body may be NULL. On success it returns
 * true and fills *resp: status, and body a malloc'd copy (NUL-terminated,
 * length n; free it). On failure it returns false, *err (when err is not
 * NULL) is a malloc'd message, and resp->refused says the host refused the
 * destination (its allowed_hosts does not name it, a person denied it, or
 * a person is still to be asked, and the call ends in an input_required
 * round that runs it again with the answer). A failure never traps: return
 * the message as the tool's error, and the plugin's globals survive. */
typedef struct {
	int status;
	char *body;
	size_t n;
	bool refused;
} mcp_http_response;

static inline bool mcp_http(const char *method, const char *url, const char *headers, const char *body, size_t body_n,
                            mcp_http_response *resp, char **err) {
	memset(resp, 0, sizeof *resp);
	if (err) *err = NULL;
	mcp_buf b = {0};
	mcp_buf_puts(&b, "{\"url\":");
	mcp_buf_json_string(&b, url, strlen(url));
	if (method) {
		mcp_buf_puts(&b, ",\"method\":");
		mcp_buf_json_string(&b, method, strlen(method));
	}
	if (headers) {
		mcp_buf_puts(&b, ",\"headers\":");
		mcp_buf_puts(&b, headers);
	}
	if (body && body_n > 0) {
		mcp_buf_puts(&b, ",\"body\":\"");
		mcp_buf_base64(&b, body, body_n);
		mcp_buf_puts(&b, "\"");
	}
	mcp_buf_puts(&b, "}");
	size_t rn = 0;
	char *reply = b.oom ? NULL : mcp_kernel_get(mcp_host_http(mcp_kernel_put(b.p, b.len)), &rn);
	free(b.p);
	if (!reply) {
		static const char msg[] = "http: no reply from the host";
		if (err && (*err = malloc(sizeof msg)) != NULL) memcpy(*err, msg, sizeof msg);
		return false;
	}
	mcp_json r = {reply, rn};
	char *e = mcp_json_string(mcp_json_get(r, "error"), NULL);
	if (e) {
		resp->refused = mcp_json_is(mcp_json_get(r, "refused"), "true");
		free(reply);
		if (err) *err = e; else free(e);
		return false;
	}
	double status = 0;
	mcp_json_number(mcp_json_get(r, "status"), &status);
	resp->status = (int)status;
	size_t en = 0;
	char *enc = mcp_json_string(mcp_json_get(r, "body"), &en);
	resp->body = mcp_base64_decode(enc ? enc : "", enc ? en : 0, &resp->n);
	free(enc);
	free(reply);
	return resp->body != NULL;
}

#endif /* MCPHOST_H */
