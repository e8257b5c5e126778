"""Record files people write (CSV, TSV, JSON Lines, JSON): one reader, and messages that say where it broke.

Campaign files and training manifests come from spreadsheets and scripts: saved as
Latin-1 or UTF-16, cut short by a failed copy, with a comma inside an unquoted
caption, or as JSON of another shape. Python's own errors for these name neither
the file nor the line ("'utf-8' codec can't decode byte 0xe9 in position 56",
"'str' object is not a mapping"). Here a file that cannot be read as records is
refused as a whole with a `RecordFileError` (a ``ValueError``) naming the file and
the line, record or field, and what to do. Text is UTF-8; a byte-order mark says
otherwise (UTF-16 from Excel's "Unicode text", UTF-8 with BOM) and is followed.
"""
from __future__ import annotations

import codecs
import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))  # UTF-32 LE starts like UTF-16 LE
SUFFIXES = (".csv", ".tsv", ".jsonl", ".json")


class RecordFileError(ValueError):
    """A record file that cannot be read; the message names the file and where."""


@dataclass(frozen=True)
class Record:
    """One record and where it is (``line 3``, ``record '12'``), for messages about its fields."""

    source: str  # the file as messages name it: "campaign file swap_att.json"
    where: str
    values: dict[str, Any]

    def text(self, field: str, default: str = "") -> str:
        """The field as text (a number is written out); a list or object there is refused."""
        value = self.values.get(field)
        if value is None:
            return default
        if isinstance(value, (dict, list, bool)):
            raise RecordFileError(f"{self.source}, {self.where}: field {field!r} must be text, not "
                                  f"{_kind(value)}")
        return str(value)


def read_text(path: Path, what: str) -> str:
    """The file's text: UTF-8, or what its byte-order mark says; anything else names the line to fix."""
    data = path.read_bytes()
    encoding = next((name for bom, name in BOMS if data.startswith(bom)), "utf-8")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        raise RecordFileError(f"{what} {path.name} is not {encoding.upper()} text: line {line} has the byte "
                              f"0x{data[error.start]:02x}, which {encoding.upper()} does not allow (Latin-1 or a "
                              "Windows code page?). Save it as UTF-8 (in a spreadsheet: 'CSV UTF-8')") from None


def read_json(path: Path, what: str) -> Any:
    """A JSON file's value; a syntax error names the line and column (and says when the file ends too early)."""
    text = read_text(path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        cut = error.msg.startswith("Unterminated string") or error.pos >= len(text.rstrip())
        raise RecordFileError(f"{what} {path.name} is not valid JSON: {error.msg} (line {error.lineno}, column "
                              f"{error.colno})." + (" The file ends in the middle of a value: was it cut short?"
                                                   if cut else "")) from None


def read_records(path: Path, what: str, required: Sequence[str] = (), max_records: int | None = None,
                 max_bytes: int | None = None) -> list[Record]:
    """Every record of a .csv, .tsv, .jsonl or .json file (a list of objects, or an object of objects keyed by id).

    `required` columns must be in a CSV's header; JSON records are checked field by field by the caller. A file
    larger than `max_bytes` is refused before it is read, one with more than `max_records` records as soon as
    the one too many is found.
    """
    if path.suffix not in SUFFIXES:
        raise RecordFileError(f"{what} {path.name}: expected a {', '.join(SUFFIXES)} file")
    size = path.stat().st_size
    if max_bytes is not None and size > max_bytes:
        raise RecordFileError(f"{what} {path.name} has {size:,} bytes; the limit is {max_bytes:,}: split it")
    if path.suffix == ".json":
        records = _json_records(path, what)
    elif path.suffix == ".jsonl":
        records = _jsonl_records(path, what, max_records)
    else:
        records = _csv_records(path, what, required, max_records)
    if not records:
        raise RecordFileError(f"{what} {path.name} holds no records")
    if max_records is not None and len(records) > max_records:
        raise _too_many(path, what, max_records)
    return records


def _too_many(path: Path, what: str, limit: int) -> RecordFileError:
    return RecordFileError(f"{what} {path.name} holds more than {limit:,} records; the limit is {limit:,}: split it")


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}.get(
        type(value), "a number")


def _json_records(path: Path, what: str) -> list[Record]:
    data = read_json(path, what)
    if isinstance(data, dict):
        pairs = [(f"record {key!r}", value) for key, value in data.items()]
    elif isinstance(data, list):
        pairs = [(f"record {number}", value) for number, value in enumerate(data, start=1)]
    else:
        raise RecordFileError(f"{what} {path.name} holds {_kind(data)}; expected a list of objects or an object "
                              "of objects keyed by id (as SugarCrepe's files are)")
    return [_record(path, what, where, value) for where, value in pairs]


def _jsonl_records(path: Path, what: str, max_records: int | None = None) -> list[Record]:
    records: list[Record] = []
    for number, line in enumerate(read_text(path, what).splitlines(), start=1):
        if not line.strip():
            continue
        if max_records is not None and len(records) == max_records:
            raise _too_many(path, what, max_records)
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise RecordFileError(f"{what} {path.name}, line {number}: not valid JSON ({error.msg}, column "
                                  f"{error.colno}); each line must be one JSON object") from None
        records.append(_record(path, what, f"line {number}", value))
    return records


def _record(path: Path, what: str, where: str, value: Any) -> Record:
    if not isinstance(value, dict):
        raise RecordFileError(f"{what} {path.name}, {where}: expected a JSON object with named fields, got "
                              f"{_kind(value)}")
    return Record(f"{what} {path.name}", where, value)


def _csv_records(path: Path, what: str, required: Sequence[str], max_records: int | None = None) -> list[Record]:
    reader = csv.reader(io.StringIO(read_text(path, what), newline=""),
                        dialect="excel-tab" if path.suffix == ".tsv" else "excel")
    try:
        header = [name.strip() for name in next(reader, [])]
        missing = [name for name in required if name not in header]
        if missing and header:
            raise RecordFileError(f"{what} {path.name} has no {', '.join(missing)} column; its header (line 1) is: "
                                  f"{', '.join(header)}")
        records: list[Record] = []
        for row in reader:
            if not any(row):
                continue
            if max_records is not None and len(records) == max_records:
                raise _too_many(path, what, max_records)
            records.append(_csv_record(path, what, header, row, reader.line_num))
        return records
    except csv.Error as error:
        raise RecordFileError(f"{what} {path.name}, line {reader.line_num}: {error}") from None


def _csv_record(path: Path, what: str, header: list[str], row: list[str], line: int) -> Record:
    if len(row) != len(header):
        raise RecordFileError(f"{what} {path.name}, line {line}: {len(row)} field(s), but the header has "
                              f"{len(header)} ({', '.join(header)}); a text with a comma must be in double quotes")
    return Record(f"{what} {path.name}", f"line {line}", dict(zip(header, row)))
