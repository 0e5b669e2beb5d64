//! Fuzz target `acl_sjson`: see `clipforge_fuzz::entries::acl_sjson`.
#![no_main]
clipforge_fuzz::target!(acl_sjson);
