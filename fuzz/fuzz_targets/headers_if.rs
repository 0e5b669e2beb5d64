//! Fuzz target `headers_if`: see `clipforge_fuzz::entries::headers_if`.
#![no_main]
clipforge_fuzz::target!(headers_if);
