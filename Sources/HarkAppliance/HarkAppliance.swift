// The always-on appliance loop, its configuration, action dispatch and event store.
