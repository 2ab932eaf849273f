//! The `--model` spec of `clprism accuracy` (`ModelOptions::parse_spec`) and the refinements
//! of session 23.

use OpenCL::model::project::ModelOptions;

#[test]
fn model_spec_sets_and_clears_flags() {
    let r = ModelOptions::recommended();
    assert_eq!(ModelOptions::parse_spec("").unwrap(), r);
    assert_eq!(ModelOptions::parse_spec("recommended").unwrap(), r);
    let o = ModelOptions::parse_spec("recommended,-cache_reuse").unwrap();
    assert!(!o.cache_reuse);
    assert_eq!(
        o,
        ModelOptions {
            cache_reuse: false,
            ..r
        }
    );
    let o = ModelOptions::parse_spec("panwar, +waves, kernel_floor").unwrap();
    assert!(
        !ModelOptions::parse_spec("-kernel_floor")
            .unwrap()
            .kernel_floor
    );
    assert_eq!(
        o,
        ModelOptions {
            waves: true,
            kernel_floor: true,
            ..ModelOptions::panwar()
        }
    );
    assert_eq!(
        ModelOptions::parse_spec("all").unwrap(),
        ModelOptions::all()
    );
    assert!(ModelOptions::parse_spec("recommended,+nope")
        .unwrap_err()
        .contains("nope"));
    assert!(ModelOptions::parse_spec("waves,all").is_err());
    // Every listed flag is one field: switching each on alone from the baseline gives
    // distinct options, and all of them together give `all()`.
    let mut every = ModelOptions::panwar();
    let mut seen = Vec::new();
    for f in ModelOptions::FLAGS {
        let one = ModelOptions::parse_spec(&format!("panwar,+{f}")).unwrap();
        assert_ne!(one, ModelOptions::panwar(), "{f}");
        assert!(!seen.contains(&one), "{f}");
        seen.push(one);
        *every.flag_mut(f).unwrap() = true;
    }
    assert_eq!(every, ModelOptions::all());
}
