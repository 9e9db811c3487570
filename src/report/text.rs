//! Terminal exporter: aligned plain-text tables, labels and text left, numbers right, then the
//! notes.

use super::Report;

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for t in report.tables() {
        out.push_str(&table(&t));
    }
    if report.tables().is_empty() {
        out.push_str("no results with a main-phase summary or probe figures\n\n");
    }
    if !report.notes.is_empty() {
        out.push_str("Notes\n");
        for n in &report.notes {
            out.push_str(&format!("  - {n}\n"));
        }
    }
    out
}

/// One table: its title, then aligned rows, then a blank line.
pub fn table(table: &super::model::Table) -> String {
    let mut out = String::new();
    let cols = table.header.len();
    let width: Vec<usize> = (0..cols)
        .map(|c| {
            std::iter::once(&table.header)
                .chain(&table.rows)
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    out.push_str(&table.title);
    out.push('\n');
    for row in std::iter::once(&table.header).chain(&table.rows) {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, v)| {
                if c == 0 || table.text_columns.contains(&c) {
                    format!("{v:<w$}", w = width[c])
                } else {
                    format!("{v:>w$}", w = width[c])
                }
            })
            .collect();
        out.push_str("  ");
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out.push('\n');
    out
}
