//! Markdown exporter: one pipe table per report table, numbers right-aligned, notes as a list.

use super::Report;
use super::model::summary;

/// Escapes the characters that would break a table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let tables = report.tables();
    for table in &tables {
        out.push_str(&format!("### {}\n\n", cell(&table.title)));
        let header: Vec<String> = table.header.iter().map(|h| cell(h)).collect();
        out.push_str(&format!("| {} |\n", header.join(" | ")));
        let align: Vec<&str> = (0..header.len())
            .map(|c| {
                if c == 0 || table.text_columns.contains(&c) {
                    ":--"
                } else {
                    "--:"
                }
            })
            .collect();
        out.push_str(&format!("|{}|\n", align.join("|")));
        for row in &table.rows {
            let cells: Vec<String> = row.iter().map(|v| cell(v)).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out.push('\n');
        if let Some(legend) = summary::legend_of(table) {
            out.push_str(&format!("{legend}\n\n"));
        }
    }
    if tables.is_empty() {
        out.push_str("No results with a main-phase summary or probe figures.\n\n");
    }
    if !report.notes.is_empty() {
        out.push_str("**Notes**\n\n");
        for n in &report.notes {
            out.push_str(&format!("- {}\n", n.replace('*', "\\*")));
        }
    }
    out
}
