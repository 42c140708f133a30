"""ORC's file-tail messages (``orc_proto.proto``) as protobuf message classes, built at import.

The messages are declared here rather than compiled by protoc: only the tail is needed, and a
few fields are declared differently from ORC's file, with the same wire format, so that the
decoder keeps what it needs:

- ``Footer.types`` is ``repeated bytes``: each type stays the raw message, and a table's files,
  which share their schema byte for byte, decode it once (``orcproto._schema``).
- ``FileTail.footer`` is ``bytes``: the footer is parsed by itself, as a file's last bytes are,
  and a Footer keeps its raw bytes.
- enums (type kind, compression, calendar) are ``uint32``: a value this ORC does not know is
  kept and reported, not moved to the unknown fields as a closed enum would be.
- strings are ``bytes``: names and texts that are not UTF-8 are decoded with replacement, as
  ORC's Java reader decodes them, instead of failing.

Parsing is protobuf's own (upb when available): every field of every statistics message is
parsed when a footer is, and malformed bytes fail there, as in ORC's readers. Fields declared
with another wire type than they arrive with are skipped as unknown fields, as protobuf does.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_PACKAGE = "acidtool.orc"

# message name: (field number, field name, type, repeated); a type starting with an upper-case
# letter is another message of this list.
_MESSAGES: dict[str, list[tuple[int, str, str, bool]]] = {
    "IntegerStatistics": [(1, "minimum", "sint64", False), (2, "maximum", "sint64", False),
                          (3, "sum", "sint64", False)],
    "DoubleStatistics": [(1, "minimum", "double", False), (2, "maximum", "double", False),
                         (3, "sum", "double", False)],
    "StringStatistics": [(1, "minimum", "bytes", False), (2, "maximum", "bytes", False),
                         (3, "sum", "sint64", False), (4, "lowerBound", "bytes", False),
                         (5, "upperBound", "bytes", False)],
    "BucketStatistics": [(1, "count", "uint64", True)],
    "DecimalStatistics": [(1, "minimum", "bytes", False), (2, "maximum", "bytes", False),
                          (3, "sum", "bytes", False)],
    "DateStatistics": [(1, "minimum", "sint32", False), (2, "maximum", "sint32", False)],
    "TimestampStatistics": [(1, "minimum", "sint64", False), (2, "maximum", "sint64", False),
                            (3, "minimumUtc", "sint64", False),
                            (4, "maximumUtc", "sint64", False),
                            (5, "minimumNanos", "int32", False),
                            (6, "maximumNanos", "int32", False)],
    "BinaryStatistics": [(1, "sum", "sint64", False)],
    "CollectionStatistics": [(1, "minChildren", "uint64", False),
                             (2, "maxChildren", "uint64", False),
                             (3, "totalChildren", "uint64", False)],
    "ColumnStatistics": [(1, "numberOfValues", "uint64", False),
                         (2, "intStatistics", "IntegerStatistics", False),
                         (3, "doubleStatistics", "DoubleStatistics", False),
                         (4, "stringStatistics", "StringStatistics", False),
                         (5, "bucketStatistics", "BucketStatistics", False),
                         (6, "decimalStatistics", "DecimalStatistics", False),
                         (7, "dateStatistics", "DateStatistics", False),
                         (8, "binaryStatistics", "BinaryStatistics", False),
                         (9, "timestampStatistics", "TimestampStatistics", False),
                         (10, "hasNull", "bool", False), (11, "bytesOnDisk", "uint64", False),
                         (12, "collectionStatistics", "CollectionStatistics", False)],
    "StripeInformation": [(1, "offset", "uint64", False), (2, "indexLength", "uint64", False),
                          (3, "dataLength", "uint64", False),
                          (4, "footerLength", "uint64", False),
                          (5, "numberOfRows", "uint64", False)],
    "UserMetadataItem": [(1, "name", "bytes", False), (2, "value", "bytes", False)],
    "Footer": [(1, "headerLength", "uint64", False), (2, "contentLength", "uint64", False),
               (3, "stripes", "StripeInformation", True), (4, "types", "bytes", True),
               (5, "metadata", "UserMetadataItem", True), (6, "numberOfRows", "uint64", False),
               (7, "statistics", "ColumnStatistics", True),
               (8, "rowIndexStride", "uint32", False), (9, "writer", "uint32", False),
               (11, "calendar", "uint32", False), (12, "softwareVersion", "bytes", False)],
    "PostScript": [(1, "footerLength", "uint64", False), (2, "compression", "uint32", False),
                   (3, "compressionBlockSize", "uint64", False),
                   (4, "version", "uint32", True), (5, "metadataLength", "uint64", False),
                   (6, "writerVersion", "uint32", False),
                   (7, "stripeStatisticsLength", "uint64", False),
                   (8000, "magic", "bytes", False)],
    "FileTail": [(1, "postscript", "PostScript", False), (2, "footer", "bytes", False),
                 (3, "fileLength", "uint64", False), (4, "postscriptLength", "uint64", False)],
}


def _classes() -> dict[str, type]:
    F = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="acidtool/orc_tail.proto", package=_PACKAGE,
                                              syntax="proto2")
    for name, declared in _MESSAGES.items():
        message = file.message_type.add(name=name)
        for number, field_name, kind, repeated in declared:
            f = message.field.add(name=field_name, number=number,
                                  label=F.LABEL_REPEATED if repeated else F.LABEL_OPTIONAL)
            if kind[0].isupper():
                f.type, f.type_name = F.TYPE_MESSAGE, f".{_PACKAGE}.{kind}"
            else:
                f.type = getattr(F, f"TYPE_{kind.upper()}")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}"))
            for name in _MESSAGES}


CLASSES = _classes()
FooterMessage = CLASSES["Footer"]
PostScriptMessage = CLASSES["PostScript"]
FileTailMessage = CLASSES["FileTail"]
