package acidtool.test;

import java.io.IOException;
import java.util.Arrays;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * The local filesystem listing each directory in name order, as HDFS and object stores do:
 * Hive's getAcidState keeps the first of two spellings of one directory that it lists, and the
 * local disk lists in directory order.
 */
public class SortedLocalFileSystem extends RawLocalFileSystem {
  @Override
  public String getScheme() {
    return "file";
  }

  @Override
  public FileStatus[] listStatus(Path f) throws IOException {
    FileStatus[] statuses = super.listStatus(f);
    Arrays.sort(statuses, (a, b) -> a.getPath().getName().compareTo(b.getPath().getName()));
    return statuses;
  }
}
