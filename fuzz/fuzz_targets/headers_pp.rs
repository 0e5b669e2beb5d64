//! Fuzz target `headers_pp`: see `clipforge_fuzz::entries::headers_pp`.
#![no_main]
clipforge_fuzz::target!(headers_pp);
