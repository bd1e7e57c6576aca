#include "CLWS.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct clws_server {
    struct lws_context *context;
    struct lws_vhost *vhost;
    /* lws keeps pointers into the protocol table and the idle policy for the context's lifetime. */
    struct lws_protocols *protocols;
    lws_retry_bo_t idle_policy;
#if LWS_LIBRARY_VERSION_MAJOR > 4 || (LWS_LIBRARY_VERSION_MAJOR == 4 && LWS_LIBRARY_VERSION_MINOR >= 3)
    /* lws 4.3 (Debian 13) counts every context, vhost and connection bound to a log context. Left NULL, all
       of them bind lws' one global log context, whose count Debian's build (LWS_MAX_SMP 1) changes without a
       lock: two servers serving on two threads race on it, and a lost update trips lws' assert(cx->refcount)
       and aborts the process. Each server binds its own, only ever touched by its own threads in turn. */
    lws_log_cx_t log_cx;
#define CLWS_OWN_LOG_CONTEXT 1
#endif
};

const char *const clws_tls12_ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                                       "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
                                       "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

clws_server *clws_server_create(const struct clws_server_options *options, lws_callback_function *callback,
                                char *error, size_t error_length) {
    clws_server *server = calloc(1, sizeof(*server));
    if (!server) {
        snprintf(error, error_length, "out of memory");
        return NULL;
    }
    server->protocols = calloc(2, sizeof(struct lws_protocols));
    if (!server->protocols) {
        free(server);
        snprintf(error, error_length, "out of memory");
        return NULL;
    }
    /* One protocol: lws binds plain HTTP and WebSocket upgrades without a subprotocol to protocols[0]. */
    server->protocols[0].name = "hark";
    server->protocols[0].callback = callback;
    server->protocols[0].per_session_data_size = 0;
    server->protocols[0].rx_buffer_size = options->receive_buffer_bytes;

    struct lws_context_creation_info info;
    memset(&info, 0, sizeof(info));
    info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
    if (options->certificate_path)
        info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
    info.user = options->user;
    info.timeout_secs = options->timeout_seconds;
    /* A client holding a header buffer without completing its headers (slowloris) loses it after this. */
    info.timeout_secs_ah_idle = options->timeout_seconds;
    info.fd_limit_per_thread = options->file_descriptor_limit;
    info.max_http_header_data = (unsigned short)options->header_buffer_bytes;
    info.max_http_header_pool = (unsigned short)options->header_buffer_count;
    info.port = CONTEXT_PORT_NO_LISTEN;
#ifdef CLWS_OWN_LOG_CONTEXT
    server->log_cx.u.emit = lwsl_emit_stderr;
    server->log_cx.lll_flags = LLL_ERR;
    info.log_cx = &server->log_cx;
#endif
    server->context = lws_create_context(&info);
    if (!server->context) {
        snprintf(error, error_length, "lws_create_context failed");
        free(server->protocols);
        free(server);
        return NULL;
    }

    memset(&info, 0, sizeof(info));
    info.vhost_name = "hark";
    info.iface = options->interface;
    info.port = options->port;
    info.protocols = server->protocols;
    info.keepalive_timeout = options->keepalive_seconds;
    info.timeout_secs = options->timeout_seconds;
    info.timeout_secs_ah_idle = options->timeout_seconds;
    info.max_http_header_data = (unsigned short)options->header_buffer_bytes;
    info.max_http_header_pool = (unsigned short)options->header_buffer_count;
    info.options = LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
#ifdef CLWS_OWN_LOG_CONTEXT
    info.log_cx = &server->log_cx;
#endif
    if (options->ping_seconds > 0) {
        server->idle_policy.secs_since_valid_ping = options->ping_seconds;
        server->idle_policy.secs_since_valid_hangup = options->hangup_seconds;
        info.retry_and_idle_policy = &server->idle_policy;
    }
    /* lws 4.1 given an IPv4 address with IPv6 enabled binds [::] (every interface): an IPv4 address must get
       an IPv4 socket, or "127.0.0.1" would serve the whole network. */
    struct in_addr ipv4;
    if (options->interface && inet_pton(AF_INET, options->interface, &ipv4) == 1)
        info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
    if (options->certificate_path) {
        /* lws reads this flag per vhost too: without it the vhost silently serves plain HTTP. */
        info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
        info.ssl_cert_filepath = options->certificate_path;
        info.ssl_private_key_filepath = options->private_key_path;
        info.alpn = options->alpn;
        info.ssl_cipher_list = clws_tls12_ciphers;
        info.ssl_options_set = (long)(SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1 | SSL_OP_CIPHER_SERVER_PREFERENCE);
    }
    server->vhost = lws_create_vhost(server->context, &info);
    if (!server->vhost) {
        snprintf(error, error_length,
                 "lws_create_vhost failed (port %d in use, address %s not local, or the certificate/key unusable)",
                 options->port, options->interface ? options->interface : "*");
        lws_context_destroy(server->context);
        free(server->protocols);
        free(server);
        return NULL;
    }
    return server;
}

int clws_server_port(const clws_server *server) { return lws_get_vhost_listen_port(server->vhost); }

struct lws_context *clws_server_context(const clws_server *server) { return server->context; }

int clws_server_log_context_is_own(const clws_server *server) {
#ifdef CLWS_OWN_LOG_CONTEXT
    const lws_log_cx_t *own = &server->log_cx;
    return lwsl_context_get_cx(server->context) == own && lwsl_vhost_get_cx(server->vhost) == own;
#else
    (void)server;
    return -1;
#endif
}

void clws_server_destroy(clws_server *server) {
    if (!server)
        return;
    lws_context_destroy(server->context);
    free(server->protocols);
    free(server);
}

static const struct {
    enum lws_token_indexes token;
    const char *method;
} request_lines[] = {
    {WSI_TOKEN_GET_URI, "GET"},       {WSI_TOKEN_POST_URI, "POST"},   {WSI_TOKEN_OPTIONS_URI, "OPTIONS"},
    {WSI_TOKEN_PUT_URI, "PUT"},       {WSI_TOKEN_PATCH_URI, "PATCH"}, {WSI_TOKEN_DELETE_URI, "DELETE"},
    {WSI_TOKEN_HEAD_URI, "HEAD"},     {WSI_TOKEN_CONNECT, "CONNECT"},
};

int clws_request_path_token(struct lws *wsi, const char **method) {
    *method = NULL;
    /* HTTP/2 first: an h2 stream carries :path, and the h1 tokens are empty. */
    if (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_COLON_PATH) > 0)
        return WSI_TOKEN_HTTP_COLON_PATH;
    for (size_t i = 0; i < sizeof(request_lines) / sizeof(request_lines[0]); i++) {
        if (lws_hdr_total_length(wsi, request_lines[i].token) > 0) {
            *method = request_lines[i].method;
            return request_lines[i].token;
        }
    }
    return -1;
}

int clws_token_method(void) { return WSI_TOKEN_HTTP_COLON_METHOD; }
int clws_token_query(void) { return WSI_TOKEN_HTTP_URI_ARGS; }
int clws_token_count(void) { return WSI_TOKEN_X_AUTH_TOKEN + 1; }
int clws_token_content_length(void) { return WSI_TOKEN_HTTP_CONTENT_LENGTH; }
int clws_token_transfer_encoding(void) { return WSI_TOKEN_HTTP_TRANSFER_ENCODING; }

int clws_token_is_header(int token) {
    if (token < 0 || token > WSI_TOKEN_X_AUTH_TOKEN)
        return 0;
    for (size_t i = 0; i < sizeof(request_lines) / sizeof(request_lines[0]); i++)
        if ((int)request_lines[i].token == token)
            return 0;
    switch (token) {
    case WSI_TOKEN_HTTP_URI_ARGS:
    case WSI_TOKEN_HTTP:
    case WSI_TOKEN_HTTP1_0:
    case WSI_TOKEN_PROXY:
    case WSI_TOKEN_HTTP_COLON_AUTHORITY:
    case WSI_TOKEN_HTTP_COLON_METHOD:
    case WSI_TOKEN_HTTP_COLON_PATH:
    case WSI_TOKEN_HTTP_COLON_SCHEME:
    case WSI_TOKEN_HTTP_COLON_STATUS:
    case WSI_TOKEN_COLON_PROTOCOL:
        return 0;
    default:
        return 1;
    }
}

int clws_token_name(int token, char *name, int length) {
    const unsigned char *text = lws_token_to_string((enum lws_token_indexes)token);
    if (!text || length < 1)
        return -1;
    int n = 0;
    while (text[n] && text[n] != ':' && text[n] != ' ' && n < length - 1) {
        name[n] = (char)((text[n] >= 'A' && text[n] <= 'Z') ? text[n] + 32 : text[n]);
        n++;
    }
    name[n] = '\0';
    return n;
}

int clws_header_length(struct lws *wsi, int token) {
    return lws_hdr_total_length(wsi, (enum lws_token_indexes)token);
}

int clws_header_copy(struct lws *wsi, int token, char *destination, int length) {
    return lws_hdr_copy(wsi, destination, length, (enum lws_token_indexes)token);
}

int clws_header_fragment(struct lws *wsi, int token, int index, char *destination, int length) {
    return lws_hdr_copy_fragment(wsi, destination, length, (enum lws_token_indexes)token, index);
}

void clws_peer_address(struct lws *wsi, char *destination, size_t length) {
    if (length == 0)
        return;
    destination[0] = '\0';
    struct lws *network = lws_get_network_wsi(wsi);
    if (!lws_get_peer_simple(network ? network : wsi, destination, length))
        destination[0] = '\0';
}

int clws_write_http_head(struct lws *wsi, unsigned int status, const char *const *names,
                         const char *const *values, int count, long long content_length) {
    size_t space = LWS_PRE + 512;
    for (int i = 0; i < count; i++)
        space += strlen(names[i]) + strlen(values[i]) + 8;
    unsigned char *buffer = malloc(space);
    if (!buffer)
        return -1;
    unsigned char *start = buffer + LWS_PRE, *p = start, *end = buffer + space - 1;
    char name[256];
    int failed = lws_add_http_header_status(wsi, status, &p, end);
    for (int i = 0; !failed && i < count; i++) {
        /* lws wants "name:"; HTTP/2 requires lower case, which HTTP/1.1 accepts too. */
        size_t n = strlen(names[i]);
        if (n + 2 > sizeof(name)) {
            failed = 1;
            break;
        }
        for (size_t j = 0; j < n; j++)
            name[j] = (char)((names[i][j] >= 'A' && names[i][j] <= 'Z') ? names[i][j] + 32 : names[i][j]);
        name[n] = ':';
        name[n + 1] = '\0';
        failed = lws_add_http_header_by_name(wsi, (const unsigned char *)name, (const unsigned char *)values[i],
                                             (int)strlen(values[i]), &p, end);
    }
    if (!failed && content_length >= 0)
        failed = lws_add_http_header_content_length(wsi, (lws_filepos_t)content_length, &p, end);
    if (!failed)
        failed = lws_finalize_write_http_header(wsi, start, &p, end);
    free(buffer);
    return failed ? -1 : 0;
}

int clws_write_http_body(struct lws *wsi, const unsigned char *bytes, size_t length, int final) {
    unsigned char *buffer = malloc(LWS_PRE + length + 1);
    if (!buffer)
        return -1;
    if (length)
        memcpy(buffer + LWS_PRE, bytes, length);
    int written = lws_write(wsi, buffer + LWS_PRE, length, final ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP);
    free(buffer);
    return written < (int)length ? -1 : 0;
}

int clws_write_websocket(struct lws *wsi, const unsigned char *bytes, size_t length, int binary, int first,
                         int last) {
    unsigned char *buffer = malloc(LWS_PRE + length + 1);
    if (!buffer)
        return -1;
    if (length)
        memcpy(buffer + LWS_PRE, bytes, length);
    int flags = lws_write_ws_flags(binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT, first, last);
    int written = lws_write(wsi, buffer + LWS_PRE, length, (enum lws_write_protocol)flags);
    free(buffer);
    return written < (int)length ? -1 : 0;
}

long clws_write_allowance(struct lws *wsi) { return (long)lws_get_peer_write_allowance(wsi); }

void clws_kill(struct lws *wsi) { lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC); }

int clws_token_authority(void) { return WSI_TOKEN_HTTP_COLON_AUTHORITY; }

int clws_is_http2(struct lws *wsi) { return lws_get_network_wsi(wsi) != wsi; }
