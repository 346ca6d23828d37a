//! Arrow string columns crossing to Python and back as their buffers, without a Python
//! object per value: what Spark's Arrow batches hold (`spaseq.spark.events.string_column`
//! gives a column as `(offsets, data, offset, length)`; `Built` is what pyarrow builds one
//! from). Only the conversion: the columns' meaning is the callers'.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// A string column as Python hands it over: pyarrow's offsets buffer (32-bit, little-endian)
/// and data buffer as bytes, the array's offset into them and its length.
pub type StrColumn<'py> = (Bound<'py, PyBytes>, Bound<'py, PyBytes>, usize, usize);

/// A string column's values, read in place.
#[derive(Debug, Clone, Copy)]
pub struct Strings<'a> {
    offsets: &'a [u8],
    data: &'a [u8],
    offset: usize,
    len: usize,
}

impl<'a> Strings<'a> {
    /// The values of `column` (ValueError when its buffers are too short for its length).
    pub fn of(column: &'a StrColumn<'_>) -> PyResult<Self> {
        let (offsets, data, offset, len) = column;
        let strings = Strings {
            offsets: offsets.as_bytes(),
            data: data.as_bytes(),
            offset: *offset,
            len: *len,
        };
        if strings.offsets.len() < (offset + len + 1) * 4 {
            return Err(PyValueError::new_err(
                "a string column's offsets are too short",
            ));
        }
        Ok(strings)
    }

    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Value `i` (an error for offsets outside the data or text that is not UTF-8).
    pub fn get(&self, i: usize) -> Result<&'a str, String> {
        std::str::from_utf8(self.bytes(i, i + 1)?)
            .map_err(|e| format!("value {i} of a string column: {e}"))
    }

    /// The bytes of values `from..to`, which lie one after the other in the data.
    pub fn bytes(&self, from: usize, to: usize) -> Result<&'a [u8], String> {
        let at = |k: usize| {
            let k = (self.offset + k) * 4;
            let o = &self.offsets[k..k + 4];
            usize::try_from(i32::from_le_bytes([o[0], o[1], o[2], o[3]])).ok()
        };
        at(from)
            .zip(at(to))
            .and_then(|(s, e)| self.data.get(s..e))
            .ok_or_else(|| format!("values {from}..{to} of a string column lie outside its data"))
    }
}

/// A string column being built, handed to Python as `(offsets, data)` bytes.
#[derive(Debug, Default)]
pub struct Built {
    offsets: Vec<u8>,
    data: Vec<u8>,
}

impl Built {
    pub fn with_capacity(values: usize) -> Self {
        let mut built = Built {
            offsets: Vec::with_capacity((values + 1) * 4),
            data: Vec::new(),
        };
        built.offsets.extend_from_slice(&0i32.to_le_bytes());
        built
    }

    /// The next value, written by `write` into the data (an error once the data passes
    /// Arrow's 2 GiB for a string column).
    pub fn push_with(&mut self, write: impl FnOnce(&mut Vec<u8>)) -> Result<(), String> {
        write(&mut self.data);
        let end = i32::try_from(self.data.len())
            .map_err(|_| "more than 2 GiB of text in one column of a batch".to_owned())?;
        self.offsets.extend_from_slice(&end.to_le_bytes());
        Ok(())
    }

    /// `(offsets, data)` as Python bytes.
    pub fn into_py(self, py: Python<'_>) -> (Bound<'_, PyBytes>, Bound<'_, PyBytes>) {
        (
            PyBytes::new(py, &self.offsets),
            PyBytes::new(py, &self.data),
        )
    }
}
