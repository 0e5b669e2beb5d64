//! Fuzz target `headers_lex`: see `clipforge_fuzz::entries::headers_lex`.
#![no_main]
clipforge_fuzz::target!(headers_lex);
