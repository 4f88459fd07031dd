//! The muscles of a study: the model's muscle elements (its `[load_sharing]` section) grouped
//! into muscles for plots and summaries.

use mollier::MuscleInfo;

/// A muscle: consecutive muscle elements with the same `muscle` name.
#[derive(Clone, Debug, PartialEq)]
pub struct MuscleGroup {
    /// Its name.
    pub name: String,
    /// Indices of its elements among the model's muscles.
    pub elements: Vec<usize>,
}

/// Consecutive elements with the same muscle name, in the model's order.
pub fn groups(muscles: &[MuscleInfo]) -> Vec<MuscleGroup> {
    let mut out: Vec<MuscleGroup> = Vec::new();
    for (i, m) in muscles.iter().enumerate() {
        match out.last_mut() {
            Some(g) if g.name == m.muscle => g.elements.push(i),
            _ => out.push(MuscleGroup { name: m.muscle.clone(), elements: vec![i] }),
        }
    }
    out
}
