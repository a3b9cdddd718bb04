// A hostile component (abuse.wit) for the limits of wasi:http: it hoards
// header values across calls, sets headers only the host may set, and
// passes a response's headers on to a new request. The canonical ABI of
// the imports is written by hand, as in net.c.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT(name) __attribute__((export_name(name)))
#define IMPORT(mod, name) __attribute__((import_module(mod), import_name(name)))
#define TYPES "wasi:http/types@0.2.12"

typedef int32_t handle;

IMPORT(TYPES, "[constructor]fields") handle fields_new(void);
/* Each result<_, header-error> is two bytes: the result's case, then the
 * header-error's (0 invalid-syntax, 1 forbidden, 2 immutable). */
IMPORT(TYPES, "[method]fields.append")
void fields_append(handle, const char *name, size_t n, const void *value, size_t m, uint8_t *ret);
IMPORT(TYPES, "[method]fields.set")
void fields_set(handle, const char *name, size_t n, const void *values, size_t m, uint8_t *ret);
/* result<fields, header-error>: the case at 0, the payload at 4. */
IMPORT(TYPES, "[static]fields.from-list") void fields_from_list(const void *entries, size_t n, uint8_t *ret);
IMPORT(TYPES, "[resource-drop]fields") void drop_fields(handle);
IMPORT(TYPES, "[constructor]outgoing-request") handle request_new(handle headers);
IMPORT(TYPES, "[method]outgoing-request.set-scheme")
int32_t request_set_scheme(handle, int32_t some, int32_t tag, const char *p, size_t n);
IMPORT(TYPES, "[method]outgoing-request.set-authority")
int32_t request_set_authority(handle, int32_t some, const char *p, size_t n);
IMPORT(TYPES, "[method]outgoing-request.set-path-with-query")
int32_t request_set_path(handle, int32_t some, const char *p, size_t n);
IMPORT("wasi:http/outgoing-handler@0.2.12", "handle")
void outgoing_handle(handle req, int32_t some, handle opts, void *ret);
IMPORT(TYPES, "[method]future-incoming-response.get") void future_get(handle, void *ret);
IMPORT(TYPES, "[method]incoming-response.status") int32_t response_status(handle);
IMPORT(TYPES, "[method]incoming-response.headers") handle response_headers(handle);
IMPORT(TYPES, "[resource-drop]incoming-response") void drop_response(handle);
IMPORT(TYPES, "[resource-drop]future-incoming-response") void drop_future(handle);
/* result<own<…>>: the case at 0, the handle at 4. */
IMPORT(TYPES, "[method]outgoing-request.body") void request_body(handle, uint8_t *ret);
IMPORT(TYPES, "[method]outgoing-body.write") void body_write(handle, uint8_t *ret);
/* result<_, stream-error>: the case at 0, the error's at 4. */
IMPORT("wasi:io/streams@0.2.12", "[method]output-stream.write")
void stream_write(handle, const void *p, size_t n, uint8_t *ret);

EXPORT("cabi_realloc")
void *cabi_realloc(void *old, size_t old_size, size_t align, size_t new_size) {
	(void)old_size; (void)align;
	void *p = realloc(old, new_size ? new_size : 1);
	if (!p) abort();
	return p;
}

static handle hoard_fields;
static uint32_t hoarded;

EXPORT("hoard")
uint32_t hoard(uint32_t count, uint32_t size) {
	uint8_t r[2];
	if (!hoard_fields) hoard_fields = fields_new();
	uint8_t *v = malloc(size ? size : 1);
	memset(v, 'v', size);
	for (uint32_t i = 0; i < count; i++) {
		fields_append(hoard_fields, "x-hoard", 7, v, size, r);
		if (r[0]) break;
		hoarded++;
	}
	free(v);
	return hoarded;
}

/* stuff writes mib MiB to the body of a request it never sends nor drops:
 * the host holds them. Returns the MiB written so far. */
EXPORT("stuff")
uint32_t stuff(uint32_t mib) {
	static uint32_t written;
	_Alignas(4) uint8_t r[12];
	handle req = request_new(fields_new());
	request_body(req, r);
	if (r[0]) return written;
	body_write(*(handle *)(r + 4), r);
	if (r[0]) return written;
	handle out = *(handle *)(r + 4);
	uint8_t *chunk = calloc(1, 1 << 20);
	for (uint32_t i = 0; i < mib; i++) {
		stream_write(out, chunk, 1 << 20, r);
		if (r[0]) break;
		written++;
	}
	free(chunk);
	return written;
}

/* The result of an export: result<string, string>. */
static struct { uint8_t tag; char *ptr; size_t len; } ret;

static void *answer(int tag, const char *msg) {
	ret.tag = tag;
	ret.ptr = strdup(msg);
	ret.len = strlen(msg);
	return &ret;
}

static const char *header_errors[] = {"invalid-syntax", "forbidden", "immutable"};

EXPORT("set-header")
void *set_header(uint32_t how, char *name, size_t n, char *value, size_t m) {
	_Alignas(4) uint8_t r[8];
	handle f = 0;
	struct { const void *p; size_t n; } one = {value, m};
	struct { const char *name; size_t n; const void *value; size_t m; } entry = {name, n, value, m};
	switch (how) {
	case 0:
		f = fields_new();
		fields_append(f, name, n, value, m, r);
		r[4] = r[1];
		break;
	case 1:
		f = fields_new();
		fields_set(f, name, n, &one, 1, r);
		r[4] = r[1];
		break;
	default:
		fields_from_list(&entry, 1, r);
		if (!r[0]) f = *(handle *)(r + 4);
	}
	if (f) drop_fields(f);
	if (r[0]) return answer(1, r[4] < 3 ? header_errors[r[4]] : "header-error ?");
	return answer(0, "accepted");
}

/* send makes a GET request with headers to http://auth/path and returns
 * the response, or 0 with *code set to the error-code's case. */
static handle send(handle headers, const char *auth, size_t auth_len, const char *path, int *code) {
	static _Alignas(8) uint8_t area[64];
	handle req = request_new(headers);
	request_set_scheme(req, 1, 0, NULL, 0);
	request_set_authority(req, 1, auth, auth_len);
	request_set_path(req, 1, path, strlen(path));
	outgoing_handle(req, 0, 0, area);
	if (area[0]) {
		*code = area[8];
		return 0;
	}
	handle fut = *(handle *)(area + 8);
	future_get(fut, area);
	drop_future(fut);
	if (!area[0] || area[8]) {
		*code = -1;
		return 0;
	}
	if (area[16]) {
		*code = area[24];
		return 0;
	}
	return *(handle *)(area + 24);
}

static void *failed(int code) {
	char msg[64];
	/* Case 15 of wasi:http/types.error-code. */
	if (code == 15) return answer(1, "HTTP-request-denied");
	snprintf(msg, sizeof msg, "error-code %d", code);
	return answer(1, msg);
}

EXPORT("relay")
void *relay(char *url, size_t n) {
	char *u = strndup(url, n);
	if (n) free(url);
	if (strncmp(u, "http://", 7) != 0) return answer(1, "want an http:// URL");
	char *auth = u + 7, *path = strchr(auth, '/');
	size_t auth_len = path ? (size_t)(path - auth) : strlen(auth);
	if (!path) path = "/";
	int code = 0;
	handle first = send(fields_new(), auth, auth_len, path, &code);
	if (!first) return failed(code);
	handle second = send(response_headers(first), auth, auth_len, path, &code);
	drop_response(first);
	if (!second) return failed(code);
	char msg[32];
	snprintf(msg, sizeof msg, "%d", response_status(second));
	drop_response(second);
	free(u);
	return answer(0, msg);
}

EXPORT("cabi_post_set-header") void post_set_header(void *r) { (void)r; free(ret.ptr); }
EXPORT("cabi_post_relay") void post_relay(void *r) { (void)r; free(ret.ptr); }
