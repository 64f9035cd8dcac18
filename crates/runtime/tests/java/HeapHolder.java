import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedList;

/** Holds a known object graph and idles, for heap-dump tests. */
public class HeapHolder {
    static final class Node {
        Node left, right;
        int value;
        long stamp;
        byte[] payload;
        Node(int v) { value = v; stamp = v * 31L; }
    }

    static Object keep;

    public static void main(String[] args) throws Exception {
        ArrayList<Object> all = new ArrayList<>();
        Node[] nodes = new Node[20000];
        for (int i = 0; i < nodes.length; i++) {
            nodes[i] = new Node(i);
            if (i % 4 == 0) nodes[i].payload = new byte[(i % 200) + 1];
        }
        for (int i = 1; i < nodes.length; i++) {
            nodes[(i - 1) / 2].left = nodes[i];
            nodes[i].right = nodes[(i * 7) % nodes.length];
        }
        all.add(nodes);
        HashMap<String, int[]> map = new HashMap<>();
        for (int i = 0; i < 5000; i++) map.put("key-" + i, new int[i % 50]);
        all.add(map);
        LinkedList<long[]> list = new LinkedList<>();
        for (int i = 0; i < 3000; i++) list.add(new long[i % 9]);
        all.add(list);
        all.add(new byte[64 * 1024]);
        keep = all;
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(120_000);
    }
}
