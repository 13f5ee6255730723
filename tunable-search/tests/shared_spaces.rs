//! The eight spaces of the construction paper and the T1 files of the shared data set: valid
//! counts must equal the published ones, and T1 conditions must reproduce the brute-forced caches'
//! key sets exactly.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::PathBuf;
use tunable_search::format::kernel_tuner;
use tunable_search::space::load::{Format, load};

fn shared() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data")
}

const SPACES: [&str; 8] = [
    "dedispersion",
    "expdist",
    "hotspot",
    "gemm",
    "microhh",
    "atf_prl_2x2",
    "atf_prl_4x4",
    "atf_prl_8x8",
];

#[test]
fn valid_counts_match_expected() {
    for name in SPACES {
        let file = load(shared().join(format!("spaces/{name}.json"))).unwrap();
        assert_eq!(file.format, Format::SpacesJson);
        let expected = file
            .expected_valid
            .expect("spaces files state expected_valid");
        let space = file.builder.build().unwrap();
        assert_eq!(space.len() as u64, expected, "{name}");
        // Every configuration satisfies the constraints by direct evaluation too.
        for i in (0..space.len()).step_by(space.len() / 97 + 1) {
            assert!(space.satisfies(&space.indices(i)), "{name} #{i}");
        }
    }
}

/// The cache's configuration keys, as Kernel Tuner writes them.
fn cache_keys(file: &str) -> BTreeSet<String> {
    let mut text = String::new();
    let f = std::fs::File::open(shared().join("cachefiles").join(file)).unwrap();
    flate2::read::GzDecoder::new(f)
        .read_to_string(&mut text)
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["cache"].as_object().unwrap().keys().cloned().collect()
}

#[test]
fn t1_conditions_reproduce_cache_key_sets() {
    for (t1, caches) in [
        (
            "convolution_milo",
            [
                "convolution_milo_A100",
                "convolution_milo_A4000",
                "convolution_milo_A6000",
            ],
        ),
        (
            "dedispersion_milo",
            [
                "dedispersion_milo_A100",
                "dedispersion_milo_A4000",
                "dedispersion_milo_A6000",
            ],
        ),
    ] {
        let file = load(shared().join(format!("spaces/{t1}.t1.json"))).unwrap();
        assert_eq!(file.format, Format::T1);
        let space = file.builder.build().unwrap();
        let ours: BTreeSet<String> = (0..space.len())
            .map(|i| kernel_tuner::key(&space.values(i)))
            .collect();
        assert_eq!(ours.len(), space.len());
        for cache in caches {
            let theirs = cache_keys(&format!("{cache}.json.gz"));
            assert_eq!(ours.len(), theirs.len(), "{cache}");
            assert!(
                ours == theirs,
                "{t1} vs {cache}: {:?} / {:?}",
                ours.difference(&theirs).next(),
                theirs.difference(&ours).next()
            );
        }
    }
}

#[test]
fn every_shared_t1_file_loads() {
    for t1 in [
        "convolution_milo",
        "dedispersion_milo",
        "gemm_milo",
        "hotspot_milo",
    ] {
        let space = load(shared().join(format!("spaces/{t1}.t1.json")))
            .unwrap()
            .builder
            .build()
            .unwrap();
        assert!(!space.is_empty(), "{t1}");
    }
}
