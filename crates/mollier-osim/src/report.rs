//! The import report: every object of the `.osim` file that Mollier does not reproduce exactly —
//! where it is, what it is, and what the import did with it.

/// One object the import left out, approximated or changed.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// `file:line:col` of the object.
    pub place: String,
    /// Its name in the `.osim` file.
    pub object: String,
    /// Its OpenSim type (tag).
    pub kind: String,
    /// What the import did, and by how much the result differs where that is known.
    pub action: String,
}

impl Entry {
    /// An entry.
    pub fn new(place: &str, object: &str, kind: &str, action: impl Into<String>) -> Self {
        Self { place: place.into(), object: object.into(), kind: kind.into(), action: action.into() }
    }
}

/// The whole report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// The source file.
    pub source: String,
    /// What was imported, in numbers (bodies, joints, coordinates, muscles, ...).
    pub counts: Vec<(String, usize)>,
    /// Objects not imported exactly.
    pub entries: Vec<Entry>,
}

impl Report {
    /// The report as Markdown: a summary and a table of the entries.
    pub fn markdown(&self) -> String {
        let mut s = format!("# Import report: `{}`\n\n", self.source);
        s.push_str("Imported: ");
        let counts: Vec<String> = self.counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
        s.push_str(&counts.join(", "));
        s.push_str(".\n\n");
        if self.entries.is_empty() {
            s.push_str("Every object of the file was imported exactly.\n");
            return s;
        }
        s.push_str(&format!("{} objects not imported exactly:\n\n", self.entries.len()));
        s.push_str("| where | object | type | what was done |\n|---|---|---|---|\n");
        for e in &self.entries {
            s.push_str(&format!("| {} | `{}` | {} | {} |\n", e.place, cell(&e.object), cell(&e.kind), cell(&e.action)));
        }
        s
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}
