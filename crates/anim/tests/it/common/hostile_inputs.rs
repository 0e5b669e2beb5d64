//! Hostile-input builders shared by the codec library's hostile tests and the CLI's: a glTF
//! chain of any depth with embedded buffers, declared-size bombs, text loaded as a named file.

use clipforge_anim::clip::RawClip;
use clipforge_anim::formats::{self, ImportError};
use std::path::Path;

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

pub fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in data.chunks(3) {
        let v = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            out.push(if i <= c.len() {
                A[(v >> (18 - 6 * i) & 63) as usize] as char
            } else {
                '='
            });
        }
    }
    out
}

/// Binary data of one rotation channel: `times` then one quaternion per key (turning about Z).
pub fn keys_bin(times: &[f32]) -> Vec<u8> {
    let mut bin = Vec::new();
    for t in times {
        bin.extend_from_slice(&t.to_le_bytes());
    }
    for k in 0..times.len() {
        let a = 0.3 * k as f32;
        for c in [0.0, 0.0, a.sin(), a.cos()] {
            bin.extend_from_slice(&c.to_le_bytes());
        }
    }
    bin
}

/// A glTF with `num_nodes` nodes in one chain, `num_anims` animations each rotating the nodes
/// listed in `animated` with the same keys, its buffer at `uri` (`None`: embedded as base64).
pub fn chain_gltf(
    times: &[f32],
    num_nodes: usize,
    animated: &[usize],
    num_anims: usize,
    uri: Option<&str>,
) -> (String, Vec<u8>) {
    let bin = keys_bin(times);
    let n = times.len();
    let nodes: Vec<String> = (0..num_nodes)
        .map(|i| {
            if i + 1 < num_nodes {
                format!(
                    r#"{{"name":"n{i}","children":[{}],"translation":[0,0.001,0]}}"#,
                    i + 1
                )
            } else {
                format!(r#"{{"name":"n{i}","translation":[0,0.001,0]}}"#)
            }
        })
        .collect();
    let channels: Vec<String> = animated
        .iter()
        .map(|&i| format!(r#"{{"sampler":0,"target":{{"node":{i},"path":"rotation"}}}}"#))
        .collect();
    let anims: Vec<String> = (0..num_anims)
        .map(|a| {
            format!(
                r#"{{"name":"a{a}","samplers":[{{"input":0,"output":1}}],"channels":[{}]}}"#,
                channels.join(",")
            )
        })
        .collect();
    let uri = match uri {
        Some(u) => u.to_string(),
        None => format!("data:application/octet-stream;base64,{}", base64(&bin)),
    };
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"nodes":[{}],
"buffers":[{{"byteLength":{},"uri":"{uri}"}}],
"bufferViews":[{{"buffer":0,"byteOffset":0,"byteLength":{}}},{{"buffer":0,"byteOffset":{},"byteLength":{}}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":{n},"type":"SCALAR","min":[{}],"max":[{}]}},
{{"bufferView":1,"componentType":5126,"count":{n},"type":"VEC4"}}],
"animations":[{}]}}"#,
        nodes.join(","),
        bin.len(),
        4 * n,
        4 * n,
        16 * n,
        times[0],
        times[n - 1],
        anims.join(",")
    );
    (json, bin)
}

pub fn load_text(text: &str, name: &str) -> Result<Vec<RawClip>, ImportError> {
    formats::load_clips_from_bytes(text.as_bytes(), Path::new(name))
}

pub const SJSON_HUGE_ONE_BONE: &str = "version = 5\nclip = { name = \"x\" num_samples = 49999999 sample_rate = 30 }\nbones = [ { name = \"a\" } ]\ntracks = []\n";
pub const SJSON_ZERO_BONES: &str =
    "version = 5\nclip = { name = \"z\" num_samples = 2000000000 sample_rate = 30 }\nbones = []\n";
