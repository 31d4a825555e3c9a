package dev.privacyrelay.engine;

import java.nio.file.Files;
import java.nio.file.Path;

/** A stand-in library whose pr_abi_version answers another version, built with the system's C compiler (cc). */
public final class OtherAbiLibrary {
    private OtherAbiLibrary() {}

    public static Path build() throws Exception {
        Path dir = Files.createTempDirectory("pr-java-abi-");
        Path source = dir.resolve("abi.c");
        Path lib = dir.resolve("libother_abi.so");
        Files.writeString(source, "int pr_abi_version(void) { return " + (Engine.ABI_VERSION + 1) + "; }\n");
        Process cc = new ProcessBuilder("cc", "-shared", "-fPIC", "-o", lib.toString(), source.toString()).redirectErrorStream(true).start();
        String out = new String(cc.getInputStream().readAllBytes());
        if (cc.waitFor() != 0) throw new IllegalStateException("cc failed: " + out);
        return lib;
    }
}
