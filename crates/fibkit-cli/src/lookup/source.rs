//! Where `fibkit lookup` reads addresses: its arguments, files and standard
//! input (gzip or bzip2 compressed or not), each cut into blocks of whole
//! lines.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::PathBuf;

use anyhow::{anyhow, bail, Context as _, Result};
use fibkit::load::{decompressing_reader, parse_address};

use super::fields::{address_like, all_fields, detect_delimiter, field_at, Layout};

/// Bytes a block holds (it ends at the last line break within).
const BLOCK: usize = 1 << 20;
/// A UTF-8 byte-order mark, as spreadsheets start a CSV file.
const BOM: &[u8] = b"\xef\xbb\xbf";
/// The longest line read: a longer one is an error, not unbounded memory.
const MAX_LINE: usize = 64 << 20;

/// One source of addresses.
#[derive(Debug, PartialEq, Eq)]
pub enum Source {
    /// Addresses given as arguments (consecutive ones form one source).
    Arguments(Vec<String>),
    /// Standard input (`-`).
    Stdin,
    /// A file.
    File(PathBuf),
}

/// The sources the arguments name, in order: an argument is an address if
/// it parses as one, `-` standard input, else a file. No argument at all
/// reads standard input.
///
/// # Errors
/// Standard input named twice; an argument that is neither an address nor
/// an existing file.
pub fn sources(arguments: &[String]) -> Result<Vec<Source>> {
    let mut sources = Vec::new();
    for argument in arguments {
        if argument == "-" {
            if sources.contains(&Source::Stdin) {
                bail!("standard input (-) is named twice");
            }
            sources.push(Source::Stdin);
            continue;
        }
        match parse_address(argument.as_bytes()) {
            Ok(_) => match sources.last_mut() {
                Some(Source::Arguments(addresses)) => addresses.push(argument.clone()),
                _ => sources.push(Source::Arguments(vec![argument.clone()])),
            },
            Err(error) => {
                let path = PathBuf::from(argument);
                if !path.exists() {
                    bail!("{argument}: no such file, and not an address ({error})");
                }
                sources.push(Source::File(path));
            }
        }
    }
    if arguments.is_empty() {
        sources.push(Source::Stdin);
    }
    Ok(sources)
}

/// Reads a source block by block.
pub struct SourceReader {
    name: String,
    input: Box<dyn Read + Send>,
    /// The start of a line that the last block could not hold.
    carry: Vec<u8>,
    /// A block read ahead (to find the layout), with its first line number.
    pending: Option<(Vec<u8>, u64)>,
    /// The number of the next block's first line.
    next_line: u64,
    eof: bool,
    /// The CSV header line, if the source has one.
    header: Option<Vec<u8>>,
}

impl SourceReader {
    /// Opens a source.
    ///
    /// # Errors
    /// A file that cannot be opened, named.
    pub fn open(source: &Source) -> Result<Self> {
        let (name, input): (String, Box<dyn Read + Send>) = match source {
            Source::Arguments(addresses) => {
                ("arguments".to_string(), Box::new(io::Cursor::new(addresses.join("\n").into_bytes())))
            }
            Source::Stdin => {
                let input = decompressing_reader(BufReader::with_capacity(BLOCK, io::stdin()));
                ("standard input".to_string(), input.context("reading standard input")?)
            }
            Source::File(path) => {
                let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
                let input = decompressing_reader(BufReader::with_capacity(BLOCK, file));
                (path.display().to_string(), input.with_context(|| format!("reading {}", path.display()))?)
            }
        };
        Ok(SourceReader { name, input, carry: Vec::new(), pending: None, next_line: 1, eof: false, header: None })
    }

    /// The source's name in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The header line, if [`SourceReader::layout`] found one.
    pub fn header(&self) -> Option<&[u8]> {
        self.header.as_deref()
    }

    /// Where the address stands in this source's lines: `column` (a name
    /// or a 1-based index) of lines split on `delimiter` (detected when
    /// `None`), or the whole line without `column`. Reads the first block
    /// to find the header and the delimiter.
    ///
    /// # Errors
    /// Column 0, a column name no header has, a read error.
    pub fn layout(&mut self, column: Option<&str>, delimiter: Option<u8>) -> Result<Layout> {
        let Some(column) = column else { return Ok(Layout::Lines) };
        let index = match column.parse::<usize>() {
            Ok(0) => bail!("--column 0: columns count from 1"),
            Ok(number) => Some(number - 1),
            Err(_) => None,
        };
        let Some((block, first_line)) = self.read_block().with_context(|| format!("reading {}", self.name))? else {
            return Ok(Layout::Column { index: index.unwrap_or(0), delimiter: delimiter.unwrap_or(b',') });
        };
        let line_end = memchr::memchr(b'\n', &block).unwrap_or(block.len());
        let first = block[..line_end].strip_suffix(b"\r").unwrap_or(&block[..line_end]);
        let delimiter = delimiter.unwrap_or_else(|| detect_delimiter(first));
        let (index, header) = match index {
            Some(index) => {
                // A header's column is a name: a first row whose column
                // holds a malformed address is a row, and named as one.
                let field = field_at(first, delimiter, index).ok();
                let name = |(from, to): (usize, usize)| {
                    let field = &first[from..to];
                    parse_address(field).is_err() && !address_like(field)
                };
                (index, field.is_some_and(name))
            }
            None => {
                let names = all_fields(first, delimiter);
                let index = names.iter().position(|name| name == column).ok_or_else(|| {
                    anyhow!("{}: no column {column:?} in the header line (columns: {})", self.name, names.join(", "))
                })?;
                (index, true)
            }
        };
        self.pending = Some(if header {
            self.header = Some(first.to_vec());
            (block.get(line_end + 1..).unwrap_or_default().to_vec(), first_line + 1)
        } else {
            (block, first_line)
        });
        Ok(Layout::Column { index, delimiter })
    }

    /// The next block of whole lines without taking it (the next
    /// [`SourceReader::next_block`] gives it), or `None` at the end.
    ///
    /// # Errors
    /// As [`SourceReader::next_block`].
    pub fn peek_block(&mut self) -> Result<Option<&[u8]>> {
        if self.pending.is_none() {
            self.pending = self.read_block()?;
        }
        Ok(self.pending.as_ref().map(|(block, _)| block.as_slice()))
    }

    /// The next block of whole lines and the number of its first line, or
    /// `None` at the end.
    ///
    /// # Errors
    /// A read error, or a line longer than 64 MiB.
    pub fn next_block(&mut self) -> Result<Option<(Vec<u8>, u64)>> {
        match self.pending.take() {
            Some(block) => Ok(Some(block)),
            None => self.read_block(),
        }
    }

    fn read_block(&mut self) -> Result<Option<(Vec<u8>, u64)>> {
        let mut block = std::mem::take(&mut self.carry);
        let mut goal = BLOCK.max(block.len() + BLOCK / 2);
        loop {
            self.fill(&mut block, goal).with_context(|| format!("reading {}", self.name))?;
            // A UTF-8 byte-order mark is not part of the first line (the
            // table loaders drop it too).
            if self.next_line == 1 && block.starts_with(BOM) {
                block.drain(..BOM.len());
            }
            let end = if self.eof {
                if block.is_empty() {
                    return Ok(None);
                }
                block.len()
            } else if let Some(last_break) = memchr::memrchr(b'\n', &block) {
                last_break + 1
            } else if block.len() >= MAX_LINE {
                bail!("{}:{}: a line longer than {} MiB", self.name, self.next_line, MAX_LINE >> 20);
            } else {
                goal = block.len() + BLOCK;
                continue;
            };
            self.carry = block[end..].to_vec();
            block.truncate(end);
            let first_line = self.next_line;
            self.next_line += memchr::memchr_iter(b'\n', &block).count() as u64;
            return Ok(Some((block, first_line)));
        }
    }

    /// Reads into `block` until it holds `goal` bytes or the input ends.
    fn fill(&mut self, block: &mut Vec<u8>, goal: usize) -> io::Result<()> {
        while block.len() < goal && !self.eof {
            let filled = block.len();
            block.resize(goal, 0);
            match self.input.read(&mut block[filled..]) {
                Ok(read) => {
                    block.truncate(filled + read);
                    self.eof = read == 0;
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => block.truncate(filled),
                Err(error) => {
                    block.truncate(filled);
                    return Err(error);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(text: &str) -> SourceReader {
        let input = Box::new(io::Cursor::new(text.as_bytes().to_vec()));
        let (carry, pending, header) = (Vec::new(), None, None);
        SourceReader { name: "t".into(), input, carry, pending, next_line: 1, eof: false, header }
    }

    fn blocks(reader: &mut SourceReader) -> Vec<(String, u64)> {
        std::iter::from_fn(|| reader.next_block().unwrap())
            .map(|(bytes, line)| (String::from_utf8(bytes).unwrap(), line))
            .collect()
    }

    #[test]
    fn arguments_are_addresses_files_or_standard_input() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let path = file.path().display().to_string();
        let arguments = ["1.2.3.4", "::1", &path, "-", "5.6.7.8"].map(String::from);
        let expected = vec![
            Source::Arguments(vec!["1.2.3.4".into(), "::1".into()]),
            Source::File(file.path().to_path_buf()),
            Source::Stdin,
            Source::Arguments(vec!["5.6.7.8".into()]),
        ];
        assert_eq!(sources(&arguments).unwrap(), expected);
        assert_eq!(sources(&[]).unwrap(), [Source::Stdin]);
        let message = sources(&["-".into(), "-".into()]).unwrap_err().to_string();
        assert_eq!(message, "standard input (-) is named twice");
        let message = sources(&["1.2.3.256".into()]).unwrap_err().to_string();
        assert_eq!(message, "1.2.3.256: no such file, and not an address (not an IPv4 or IPv6 address)");
    }

    #[test]
    fn blocks_end_at_line_breaks_and_count_lines() {
        let mut lines = String::new();
        for number in 0..200_000 {
            lines.push_str(&format!("10.{}.{}.{}\n", number >> 16, (number >> 8) & 255, number & 255));
        }
        lines.push_str("1.1.1.1");
        let mut source = reader(&lines);
        let read = blocks(&mut source);
        assert!(read.len() > 1);
        assert!(read.iter().take(read.len() - 1).all(|(block, _)| block.ends_with('\n')));
        assert_eq!(read.iter().map(|(block, _)| block.as_str()).collect::<String>(), lines);
        let mut line = 1;
        for (block, first_line) in &read {
            assert_eq!(*first_line, line);
            line += block.matches('\n').count() as u64;
        }
    }

    #[test]
    fn headers_and_delimiters_are_detected_in_the_first_line() {
        let mut source = reader("time\tsrc\n1\t192.0.2.1\n");
        assert_eq!(source.layout(Some("src"), None).unwrap(), Layout::Column { index: 1, delimiter: b'\t' });
        assert_eq!(source.header(), Some(&b"time\tsrc"[..]));
        assert_eq!(blocks(&mut source), [("1\t192.0.2.1\n".to_string(), 2)]);
        let mut source = reader("1,192.0.2.1\r\n2,192.0.2.2\r\n");
        assert_eq!(source.layout(Some("2"), None).unwrap(), Layout::Column { index: 1, delimiter: b',' });
        assert_eq!(source.header(), None);
        assert_eq!(blocks(&mut source)[0].1, 1);
        let mut source = reader("a;\"src ip\"\r\n");
        assert_eq!(source.layout(Some("src ip"), Some(b';')).unwrap(), Layout::Column { index: 1, delimiter: b';' });
        assert_eq!(source.header(), Some(&b"a;\"src ip\""[..]));
        let message = reader("a,b\n").layout(Some("c"), None).unwrap_err().to_string();
        assert_eq!(message, "t: no column \"c\" in the header line (columns: a, b)");
        assert!(reader("a\n").layout(Some("0"), None).is_err());
        assert_eq!(reader("").layout(None, None).unwrap(), Layout::Lines);
    }
}
