// For the program matrix: a JVM is the hard case for an LD_PRELOAD tracer.
// It catches null dereferences as SIGSEGV in its own handler, suspends
// threads with signals, runs many threads, and calls malloc from native
// code (zlib's, here) under interpreted and compiled Java frames, which
// are code in no module. Its output is the same every run.
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

public class JitHeap {
  static int squeeze(byte[] input) throws Exception {
    Deflater d = new Deflater(6);
    d.setInput(input);
    d.finish();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buf = new byte[4096];
    while (!d.finished()) out.write(buf, 0, d.deflate(buf));
    d.end();
    Inflater i = new Inflater();
    i.setInput(out.toByteArray());
    int total = 0;
    while (!i.finished()) total += i.inflate(buf);
    i.end();
    return total;
  }

  public static void main(String[] args) throws Exception {
    List<String> words = new ArrayList<>();
    for (int i = 0; i < 200000; i++) words.add("w" + (i % 977));
    String nothing = args.length > 100 ? "" : null;
    int caught = 0;
    for (int i = 0; i < 2000; i++) {
      try {
        nothing.length();
      } catch (NullPointerException e) {
        caught++;
      }
    }
    int[] inflated = new int[2];
    Thread[] workers = new Thread[2];
    for (int t = 0; t < 2; t++) {
      final int k = t;
      workers[t] = new Thread(() -> {
        try {
          for (int r = 0; r < 300; r++) inflated[k] += squeeze(String.join(",", words.subList(r, r + 500)).getBytes());
        } catch (Exception e) {
          throw new RuntimeException(e);
        }
      });
      workers[t].start();
    }
    for (Thread w : workers) w.join();
    Path file = Path.of("words.txt");
    Files.writeString(file, String.join("\n", words.subList(0, 5000)));
    System.out.println(words.size() + " words, " + caught + " caught, " + (inflated[0] + inflated[1]) +
                       " bytes inflated, " + Files.readAllLines(file).size() + " lines read back");
  }
}
