// The LAN companion server: HTTP, WebSocket and TLS through libwebsockets, auth, the APIs and the web page.
