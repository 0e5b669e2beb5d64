//! Fuzz target `headers_trace`: see `clipforge_fuzz::entries::headers_trace`.
#![no_main]
clipforge_fuzz::target!(headers_trace);
