//! Fuzz target `bvh`: see `clipforge_fuzz::entries::bvh`.
#![no_main]
clipforge_fuzz::target!(bvh);
