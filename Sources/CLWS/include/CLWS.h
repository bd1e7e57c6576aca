#ifndef CLWS_H
#define CLWS_H
/* What Swift cannot do with libwebsockets itself: fill its big creation structs, LWS_PRE padding, the
   lws_write_ws_flags inline, enum-typed header tokens. Every symbol is prefixed clws_. */
#include <libwebsockets.h>
#include <stddef.h>

/// What `clws_server_create` needs: one context, one explicit vhost, one protocol serving HTTP and WebSocket.
struct clws_server_options {
    /// IPv4/IPv6 address or interface name to bind; NULL listens on every interface.
    const char *interface;
    /// TCP port; 0 binds any free port (read it back with `clws_server_port`).
    int port;
    /// PEM certificate and private key paths; both NULL for plain HTTP.
    const char *certificate_path;
    const char *private_key_path;
    /// ALPN list offered with TLS ("h2,http/1.1" or "http/1.1"); NULL keeps lws' default.
    const char *alpn;
    /// Bytes of header space per request (lws' "ah" buffer, `max_http_header_data`, at most 65535).
    unsigned int header_buffer_bytes;
    /// Header buffers shared by connections (`max_http_header_pool`): connections waiting for one stall.
    unsigned int header_buffer_count;
    /// Seconds lws allows a connection to complete a network step, e.g. to send its headers (`timeout_secs`).
    unsigned int timeout_seconds;
    /// Seconds an idle keep-alive HTTP/1.1 connection is kept (`keepalive_timeout`).
    int keepalive_seconds;
    /// Largest WebSocket fragment lws hands to RECEIVE in one call (`rx_buffer_size`).
    size_t receive_buffer_bytes;
    /// Most file descriptors this context may use (`fd_limit_per_thread`); 0 = the process limit.
    unsigned int file_descriptor_limit;
    /// Seconds a WebSocket (or HTTP/2 connection) may be silent before lws sends a PING, and before it hangs
    /// up when nothing, not even the PONG, has come back (`retry_and_idle_policy`); 0 turns both off.
    unsigned short ping_seconds;
    unsigned short hangup_seconds;
    /// Passed back by `lws_context_user`.
    void *user;
};

/// The TLS 1.2 cipher suites offered (OpenSSL names): ECDHE key exchange with AES-GCM or ChaCha20-Poly1305
/// only — forward secret and authenticated encryption, no CBC, SHA-1 MACs or static RSA. TLS 1.3's suites are
/// all of that kind already; TLS 1.0 and 1.1 are refused.
extern const char *const clws_tls12_ciphers;

typedef struct clws_server clws_server;

/// Creates the lws context and its vhost (`lws_create_context`, `lws_create_vhost`) with one protocol whose
/// callback receives every HTTP and WebSocket event. Returns NULL on failure with a message in `error`.
clws_server *clws_server_create(const struct clws_server_options *options, lws_callback_function *callback,
                                char *error, size_t error_length);
/// The bound port (`lws_get_vhost_listen_port`).
int clws_server_port(const clws_server *server);
/// The context, for `lws_service` and `lws_cancel_service`.
struct lws_context *clws_server_context(const clws_server *server);
/// 1 when the context and its vhost (and so every connection) bind the server's own lws log context, 0 when
/// either binds lws' global one, -1 when this lws (before 4.3) has no log contexts. See `log_cx` in shim.c.
int clws_server_log_context_is_own(const clws_server *server);
/// Destroys the context (`lws_context_destroy`: closes every connection) and frees the protocol table.
void clws_server_destroy(clws_server *server);

/// The header token that holds the request path (`WSI_TOKEN_GET_URI`, `WSI_TOKEN_POST_URI`, ... or
/// `WSI_TOKEN_HTTP_COLON_PATH` for HTTP/2), or -1. `*method` is set to the method's name ("GET", ...), or to
/// NULL for HTTP/2, where the method is in the `:method` pseudo-header (`WSI_TOKEN_HTTP_COLON_METHOD`).
int clws_request_path_token(struct lws *wsi, const char **method);
/// `WSI_TOKEN_HTTP_COLON_METHOD`, `WSI_TOKEN_HTTP_URI_ARGS`, `WSI_TOKEN_COUNT`, `WSI_TOKEN_HTTP_CONTENT_LENGTH`,
/// `WSI_TOKEN_HTTP_TRANSFER_ENCODING`: enum members spelled for Swift.
int clws_token_method(void);
int clws_token_query(void);
int clws_token_count(void);
int clws_token_content_length(void);
int clws_token_transfer_encoding(void);
/// Whether a token is a plain request header (not a request line part, pseudo-header or query argument).
int clws_token_is_header(int token);
/// The header's lower-case name without its trailing colon, copied into `name` (`lws_token_to_string`).
int clws_token_name(int token, char *name, int length);
/// Total length of a header (`lws_hdr_total_length`), 0 when absent.
int clws_header_length(struct lws *wsi, int token);
/// Copies a header, fragments joined (`lws_hdr_copy`); returns its length or -1.
int clws_header_copy(struct lws *wsi, int token, char *destination, int length);
/// Copies the `index`th fragment of a header (`lws_hdr_copy_fragment`), e.g. one `name=value` query argument.
int clws_header_fragment(struct lws *wsi, int token, int index, char *destination, int length);
/// The peer's numeric address (`lws_get_peer_simple` on the network connection).
void clws_peer_address(struct lws *wsi, char *destination, size_t length);

/// Writes a response head (`lws_add_http_header_status`, `lws_add_http_header_by_name`,
/// `lws_add_http_header_content_length`, `lws_finalize_write_http_header`): names are lower-case without colon.
/// `content_length` < 0 sends none. Returns 0, or -1 when the head does not fit or the write fails.
int clws_write_http_head(struct lws *wsi, unsigned int status, const char *const *names,
                         const char *const *values, int count, long long content_length);
/// Writes body bytes (`lws_write` with `LWS_WRITE_HTTP`, or `LWS_WRITE_HTTP_FINAL` for the last piece).
int clws_write_http_body(struct lws *wsi, const unsigned char *bytes, size_t length, int final);
/// Writes one WebSocket frame of a message (`lws_write` with `lws_write_ws_flags`).
int clws_write_websocket(struct lws *wsi, const unsigned char *bytes, size_t length, int binary, int first,
                         int last);
/// Closes `wsi` from outside its own callback, once lws next services it (`lws_set_timeout` with
/// `LWS_TO_KILL_ASYNC`).
void clws_kill(struct lws *wsi);
/// `WSI_TOKEN_HTTP_COLON_AUTHORITY`: HTTP/2's `Host`.
int clws_token_authority(void);

/// Whether `wsi` is an HTTP/2 stream (its network connection is another wsi, `lws_get_network_wsi`).
int clws_is_http2(struct lws *wsi);
/// How many bytes the peer can take now on HTTP/2 (`lws_get_peer_write_allowance`); -1 when unlimited.
long clws_write_allowance(struct lws *wsi);

#endif
