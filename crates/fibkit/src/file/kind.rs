//! What a path names, checked before a compiled FIB file is written over it
//! or read from it: a regular file, or nothing yet. A device, a FIFO, a
//! socket or a folder is refused with its kind named, never replaced by a
//! regular file (writing renames a new file over the path) nor read without
//! end (`/dev/zero`). A symbolic link is followed: writing replaces the file
//! it names and leaves the link in place.

use std::fs::FileType;
use std::io::ErrorKind;
#[cfg(unix)]
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use super::Problem;

/// The kind of file `file_type` is, as an error names it (here and in the
/// table loaders).
pub(crate) fn kind(file_type: &FileType) -> &'static str {
    #[cfg(unix)]
    {
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a folder"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else if file_type.is_file() {
        "a regular file"
    } else {
        "a special file"
    }
}

/// Refuses `file_type` unless it is a regular file's.
///
/// # Errors
/// [`Problem::NotRegularFile`] naming its kind.
pub(super) fn regular(file_type: &FileType) -> Result<(), Problem> {
    if file_type.is_file() {
        Ok(())
    } else {
        Err(Problem::NotRegularFile(kind(file_type)))
    }
}

/// The path a new file is renamed over to write `path`: `path` itself when
/// it names a regular file or nothing, the file a symbolic link at `path`
/// names (every link followed) when it is one.
///
/// # Errors
/// [`Problem::NotRegularFile`] when `path`, or what its link names, is not
/// a regular file; [`Problem::Io`] when a link names nothing or the path
/// cannot be examined.
pub(super) fn write_target(path: &Path) -> Result<PathBuf, Problem> {
    let io = |error: std::io::Error| Problem::Io(error.to_string());
    match std::fs::symlink_metadata(path) {
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(path.to_path_buf()),
        Err(error) => Err(io(error)),
        Ok(metadata) if metadata.file_type().is_symlink() => {
            let target = std::fs::canonicalize(path).map_err(|error| {
                if error.kind() == ErrorKind::NotFound {
                    Problem::Io("a symbolic link to a file that does not exist: name the file itself".into())
                } else {
                    io(error)
                }
            })?;
            regular(&std::fs::metadata(&target).map_err(io)?.file_type())?;
            Ok(target)
        }
        Ok(metadata) => regular(&metadata.file_type()).map(|()| path.to_path_buf()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_and_new_paths_are_written_in_place_links_through_to_their_file() {
        let folder = tempfile::tempdir().unwrap();
        let file = folder.path().join("table.fib");
        assert_eq!(write_target(&file).unwrap(), file);
        std::fs::write(&file, b"old").unwrap();
        assert_eq!(write_target(&file).unwrap(), file);
        #[cfg(unix)]
        {
            let link = folder.path().join("current.fib");
            std::os::unix::fs::symlink(&file, &link).unwrap();
            assert_eq!(write_target(&link).unwrap(), file.canonicalize().unwrap());
            let dangling = folder.path().join("dangling.fib");
            std::os::unix::fs::symlink(folder.path().join("missing"), &dangling).unwrap();
            assert!(write_target(&dangling).unwrap_err().to_string().contains("does not exist"));
        }
    }

    #[test]
    fn folders_devices_and_fifos_are_refused_by_kind() {
        let folder = tempfile::tempdir().unwrap();
        assert_eq!(
            write_target(folder.path()).unwrap_err().to_string(),
            "a folder, not a regular file: compiled FIB files are read from and written to regular files"
        );
        #[cfg(unix)]
        {
            assert!(write_target(Path::new("/dev/null")).unwrap_err().to_string().starts_with("a character device, "));
            // Opening reads nothing from a device: `/dev/zero` never ends.
            let opened = super::super::FibFile::open(Path::new("/dev/zero")).err().unwrap();
            assert_eq!(opened.problem, Problem::NotRegularFile("a character device"));
            let fifo = folder.path().join("fifo");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            if made.is_ok_and(|status| status.success()) {
                assert!(write_target(&fifo).unwrap_err().to_string().starts_with("a FIFO, "));
            }
        }
    }
}
