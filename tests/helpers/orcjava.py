"""ORC Java's reader and Gson, driven through py4j, walking a file the way ``orc-tools data``
(ORC's PrintData) does: the ground truth that ``acidtool dump`` must match byte for byte.

Each value costs a few py4j round trips, so it is meant for small files or the first rows.
"""

from __future__ import annotations

from py4j.java_gateway import get_field


class JavaPrintData:
    def __init__(self, jvm):
        self.jvm = jvm
        self.DateWritable = jvm.org.apache.hadoop.hive.serde2.io.DateWritable

    def lines(self, path: str, limit: int | None = None) -> list[str]:
        jvm = self.jvm
        conf = jvm.org.apache.hadoop.conf.Configuration()
        reader = jvm.org.apache.orc.OrcFile.createReader(
            jvm.org.apache.hadoop.fs.Path(path), jvm.org.apache.orc.OrcFile.readerOptions(conf))
        schema = reader.getSchema()
        rows = reader.rows()
        batch = schema.createRowBatch()
        out: list[str] = []
        try:
            while rows.nextBatch(batch):
                cols = get_field(batch, "cols")
                size = get_field(batch, "size")
                for r in range(size):
                    if limit is not None and len(out) >= limit:
                        return out
                    sw = jvm.java.io.StringWriter()
                    writer = jvm.com.google.gson.stream.JsonWriter(sw)
                    writer.setLenient(True)
                    writer.beginObject()
                    names, children = schema.getFieldNames(), schema.getChildren()
                    for c in range(len(cols)):
                        writer.name(names[c])
                        self.value(writer, cols[c], children[c], r)
                    writer.endObject()
                    writer.flush()
                    out.append(sw.toString())
        finally:
            rows.close()
        return out

    def value(self, w, vector, schema, row):
        if get_field(vector, "isRepeating"):
            row = 0
        if not get_field(vector, "noNulls") and get_field(vector, "isNull")[row]:
            w.nullValue()
            return
        category = schema.getCategory().name()
        if category == "BOOLEAN":
            w.value(get_field(vector, "vector")[row] != 0)
        elif category in ("BYTE", "SHORT", "INT", "LONG"):
            w.value(self.jvm.java.lang.Long(get_field(vector, "vector")[row]))
        elif category in ("FLOAT", "DOUBLE"):
            w.value(float(get_field(vector, "vector")[row]))
        elif category in ("STRING", "CHAR", "VARCHAR"):
            w.value(vector.toString(row))
        elif category == "BINARY":
            start = get_field(vector, "start")[row]
            length = get_field(vector, "length")[row]
            data = get_field(vector, "vector")[row]
            w.beginArray()
            for b in bytes(data)[start:start + length]:
                w.value(self.jvm.java.lang.Long(b & 0xFF))
            w.endArray()
        elif category == "DECIMAL":
            w.value(get_field(vector, "vector")[row].toString())
        elif category == "DATE":
            w.value(self.DateWritable(int(get_field(vector, "vector")[row])).toString())
        elif category in ("TIMESTAMP", "TIMESTAMP_INSTANT"):
            w.value(vector.asScratchTimestamp(row).toString())
        elif category == "LIST":
            offset, length = get_field(vector, "offsets")[row], get_field(vector, "lengths")[row]
            child_type = schema.getChildren()[0]
            w.beginArray()
            for i in range(length):
                self.value(w, get_field(vector, "child"), child_type, offset + i)
            w.endArray()
        elif category == "MAP":
            offset, length = get_field(vector, "offsets")[row], get_field(vector, "lengths")[row]
            key_type, value_type = schema.getChildren()[0], schema.getChildren()[1]
            w.beginArray()
            for i in range(length):
                w.beginObject()
                w.name("_key")
                self.value(w, get_field(vector, "keys"), key_type, offset + i)
                w.name("_value")
                self.value(w, get_field(vector, "values"), value_type, offset + i)
                w.endObject()
            w.endArray()
        elif category == "STRUCT":
            names, children = schema.getFieldNames(), schema.getChildren()
            fields = get_field(vector, "fields")
            w.beginObject()
            for i in range(len(children)):
                w.name(names[i])
                self.value(w, fields[i], children[i], row)
            w.endObject()
        elif category == "UNION":
            tag = get_field(vector, "tags")[row]
            self.value(w, get_field(vector, "fields")[tag], schema.getChildren()[tag], row)
        else:
            raise AssertionError(category)
