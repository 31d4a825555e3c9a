package dev.privacyrelay.engine;

import com.sun.jna.Pointer;

/**
 * Restores originals in a stream of text chunks as they arrive: an alias cut across two chunks is held back until it
 * is whole, never longer. One per stream, used from one thread at a time; close it (try-with-resources) to free the
 * engine's handle.
 */
public final class StreamingDetokeniser implements AutoCloseable {
    private final Engine engine;
    private Pointer handle;

    StreamingDetokeniser(Engine engine, Pointer handle) {
        this.engine = engine;
        this.handle = handle;
    }

    /** The text of {@code chunk} that can be released now, originals restored. */
    public synchronized String push(String chunk) {
        return engine.pushChunk(live(), chunk);
    }

    /** What was held back at the end of the stream (a partial alias stays as it was). */
    public synchronized String finish() {
        return engine.finishStream(live());
    }

    private Pointer live() {
        if (handle == null) throw new IllegalStateException("the detokeniser is closed");
        return handle;
    }

    @Override
    public synchronized void close() {
        if (handle != null) {
            engine.freeStream(handle);
            handle = null;
        }
    }
}
