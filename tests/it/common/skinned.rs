//! A generated skinned glTF (a `.gltf` with its `.bin` beside it): a cylinder of `rings` × 25
//! vertices around a chain of bones along Y, each vertex weighted between its two nearest
//! bones, and one animation bending the chain (LINEAR rotation keys at 30 Hz).

use std::path::Path;

/// Vertices per ring of the cylinder.
pub const RING: usize = 25;

/// Writes `name.gltf` + `name.bin` into `dir`: `rings * RING` vertices, `bones` joints (0.25 m
/// apart), `keys` keyframes at 30 Hz; the animation is named `bend`.
pub fn write_skinned_gltf(dir: &Path, name: &str, rings: usize, bones: usize, keys: usize) {
    let height = 0.25 * bones as f32;
    let mut bin: Vec<u8> = Vec::new();
    let mut views = Vec::new();
    let mut push = |bin: &mut Vec<u8>, bytes: Vec<u8>| {
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        views.push((bin.len(), bytes.len()));
        bin.extend(bytes);
    };
    let f32s = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let (mut pos, mut joints, mut weights) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..rings {
        let y = height * r as f32 / (rings - 1) as f32;
        let along = y / 0.25 - 0.5;
        let b0 = (along.floor().max(0.0) as usize).min(bones - 1);
        let b1 = (b0 + 1).min(bones - 1);
        let w1 = (along - b0 as f32).clamp(0.0, 1.0);
        for k in 0..RING {
            let a = k as f32 / RING as f32 * std::f32::consts::TAU;
            pos.extend([0.1 * a.cos(), y, 0.1 * a.sin()]);
            joints.extend([b0 as u16, b1 as u16, 0, 0]);
            weights.extend([1.0 - w1, w1, 0.0, 0.0]);
        }
    }
    let mut idx: Vec<u32> = Vec::new();
    for r in 0..rings - 1 {
        for k in 0..RING {
            let (a, b) = ((r * RING + k) as u32, (r * RING + (k + 1) % RING) as u32);
            let (c, d) = (a + RING as u32, b + RING as u32);
            idx.extend([a, c, b, b, c, d]);
        }
    }
    let ibm: Vec<f32> = (0..bones)
        .flat_map(|b| {
            let mut m = [0.0f32; 16];
            m[0] = 1.0;
            m[5] = 1.0;
            m[10] = 1.0;
            m[15] = 1.0;
            m[13] = -0.25 * b as f32;
            m
        })
        .collect();
    let times: Vec<f32> = (0..keys).map(|k| k as f32 / 30.0).collect();
    let nv = rings * RING;
    push(&mut bin, f32s(&pos));
    push(
        &mut bin,
        joints.iter().flat_map(|j: &u16| j.to_le_bytes()).collect(),
    );
    push(&mut bin, f32s(&weights));
    push(&mut bin, idx.iter().flat_map(|i| i.to_le_bytes()).collect());
    push(&mut bin, f32s(&ibm));
    push(&mut bin, f32s(&times));
    for b in 0..bones {
        let rot: Vec<f32> = times
            .iter()
            .flat_map(|t| {
                let a = 0.35 * (t * 4.0 + b as f32 * 0.7).sin();
                [0.0, 0.0, (a / 2.0).sin(), (a / 2.0).cos()]
            })
            .collect();
        push(&mut bin, f32s(&rot));
    }
    let view_json: Vec<String> = views
        .iter()
        .map(|(o, l)| format!(r#"{{"buffer":0,"byteOffset":{o},"byteLength":{l}}}"#))
        .collect();
    let mut accessors = vec![
        format!(
            r#"{{"bufferView":0,"componentType":5126,"count":{nv},"type":"VEC3","min":[-0.1,0,-0.1],"max":[0.1,{height},0.1]}}"#
        ),
        format!(r#"{{"bufferView":1,"componentType":5123,"count":{nv},"type":"VEC4"}}"#),
        format!(r#"{{"bufferView":2,"componentType":5126,"count":{nv},"type":"VEC4"}}"#),
        format!(
            r#"{{"bufferView":3,"componentType":5125,"count":{},"type":"SCALAR"}}"#,
            idx.len()
        ),
        format!(r#"{{"bufferView":4,"componentType":5126,"count":{bones},"type":"MAT4"}}"#),
        format!(
            r#"{{"bufferView":5,"componentType":5126,"count":{keys},"type":"SCALAR","min":[0],"max":[{}]}}"#,
            times[keys - 1]
        ),
    ];
    for b in 0..bones {
        accessors.push(format!(
            r#"{{"bufferView":{},"componentType":5126,"count":{keys},"type":"VEC4"}}"#,
            6 + b
        ));
    }
    let mut nodes = vec![r#"{"name":"body","mesh":0,"skin":0}"#.to_string()];
    for b in 0..bones {
        let children = if b + 1 < bones {
            format!(r#","children":[{}]"#, b + 2)
        } else {
            String::new()
        };
        let t = if b == 0 { 0.0 } else { 0.25 };
        nodes.push(format!(
            r#"{{"name":"bone{b}","translation":[0,{t},0]{children}}}"#
        ));
    }
    let channels: Vec<String> = (0..bones)
        .map(|b| {
            format!(
                r#"{{"sampler":{b},"target":{{"node":{},"path":"rotation"}}}}"#,
                b + 1
            )
        })
        .collect();
    let samplers: Vec<String> = (0..bones)
        .map(|b| {
            format!(
                r#"{{"input":5,"output":{},"interpolation":"LINEAR"}}"#,
                6 + b
            )
        })
        .collect();
    let joints_list: Vec<String> = (0..bones).map(|b| (b + 1).to_string()).collect();
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0,1]}}],
"nodes":[{}],
"meshes":[{{"name":"tube","primitives":[{{"attributes":{{"POSITION":0,"JOINTS_0":1,"WEIGHTS_0":2}},"indices":3}}]}}],
"skins":[{{"inverseBindMatrices":4,"joints":[{}]}}],
"animations":[{{"name":"bend","channels":[{}],"samplers":[{}]}}],
"buffers":[{{"uri":"{name}.bin","byteLength":{}}}],
"bufferViews":[{}],
"accessors":[{}]}}"#,
        nodes.join(","),
        joints_list.join(","),
        channels.join(","),
        samplers.join(","),
        bin.len(),
        view_json.join(","),
        accessors.join(",")
    );
    std::fs::write(dir.join(format!("{name}.bin")), &bin).unwrap();
    std::fs::write(dir.join(format!("{name}.gltf")), json).unwrap();
}
