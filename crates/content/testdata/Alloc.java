// A small JVM workload for hotlaunch's real-corpus tests: builds a heap of app-like objects
// (linked nodes in a HashMap, int arrays, strings, a little random data), prints READY and waits
// to be captured.
import java.util.*;

public class Alloc {
    static final class Node {
        int id;
        long stamp;
        String name;
        Node next;
        Object payload;
        double weight;
    }

    public static void main(String[] args) throws Exception {
        int mb = args.length > 0 ? Integer.parseInt(args[0]) : 150;
        Random r = new Random(42);
        List<Object> keep = new ArrayList<>();
        Map<String, Node> map = new HashMap<>();
        String[] words = {"activity", "window", "layout", "view", "recycler", "bitmap", "config",
            "resource", "android", "intent", "service", "thread", "fragment", "adapter", "holder"};
        long bytes = 0;
        Node prev = null;
        int i = 0;
        while (bytes < ((long) mb << 20)) {
            switch (i % 5) {
                case 0, 1, 2 -> {
                    Node n = new Node();
                    n.id = i;
                    n.stamp = 1_700_000_000_000L + i * 17L;
                    n.name = words[r.nextInt(words.length)] + "_" + (i % 1000);
                    n.next = prev;
                    n.weight = r.nextInt(100) / 4.0;
                    if (i % 11 == 0) n.payload = new long[4 + r.nextInt(8)];
                    prev = n;
                    map.put(n.name + "#" + i, n);
                    bytes += 160;
                }
                case 3 -> {
                    int[] arr = new int[64 + r.nextInt(256)];
                    for (int k = 0; k < arr.length; k++) arr[k] = k * (i % 7) + (r.nextInt(100) < 10 ? r.nextInt() : 0);
                    keep.add(arr);
                    bytes += arr.length * 4L + 16;
                }
                default -> {
                    StringBuilder sb = new StringBuilder();
                    int n = 8 + r.nextInt(24);
                    for (int k = 0; k < n; k++) sb.append(words[r.nextInt(words.length)]).append(' ');
                    keep.add(sb.toString());
                    bytes += sb.length() + 40;
                }
            }
            i++;
        }
        byte[] rnd = new byte[8 << 20];
        r.nextBytes(rnd);
        keep.add(rnd);
        System.out.println("READY " + map.size() + " " + keep.size());
        System.out.flush();
        Thread.sleep(600_000);
        System.out.println(keep.size() + map.size());
    }
}
