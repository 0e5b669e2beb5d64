//! Fuzz target `gltf`: see `clipforge_fuzz::entries::gltf`.
#![no_main]
clipforge_fuzz::target!(gltf);
