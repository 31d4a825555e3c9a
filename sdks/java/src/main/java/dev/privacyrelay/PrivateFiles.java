package dev.privacyrelay;

import dev.privacyrelay.errors.ConfigurationException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Files holding secrets on the device (the gateway key file, the attester key, the stable-alias secret): they must be
 * readable by their owner only, as ssh insists for its keys; one readable by others is refused, never used.
 */
final class PrivateFiles {
    static final Pattern GATEWAY_KEY = Pattern.compile("^svc_[a-z2-7]+$");
    private static final Set<PosixFilePermission> OTHERS = EnumSet.of(
            PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE,
            PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

    private PrivateFiles() {}

    /** A leading ~ or ~/ is the user's home; ~user is refused (Java cannot resolve it portably). */
    static Path expandHome(String p) {
        if (p.equals("~") || p.startsWith("~/")) return Path.of(System.getProperty("user.home"), p.substring(1).replaceFirst("^/", ""));
        if (p.startsWith("~")) throw new ConfigurationException(p + ": only ~ or ~/ (your home directory) is expanded, not ~user; give the full path.");
        return Path.of(p);
    }

    /** Refuses a file that does not exist, is not a regular file, or that group or others may read or write. */
    static void assertPrivate(Path path, String what) {
        Set<PosixFilePermission> perms;
        try {
            if (!Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS) && !Files.isRegularFile(path)) {
                throw new ConfigurationException(what + " " + path + (Files.exists(path) ? " is not a regular file." : " does not exist."));
            }
            perms = Files.getPosixFilePermissions(path);
        } catch (NoSuchFileException e) {
            throw new ConfigurationException(what + " " + path + " does not exist.");
        } catch (IOException | UnsupportedOperationException e) {
            throw new ConfigurationException(what + " " + path + " cannot be checked: " + e.getMessage());
        }
        Set<PosixFilePermission> open = EnumSet.noneOf(PosixFilePermission.class);
        open.addAll(perms);
        open.retainAll(OTHERS);
        if (!open.isEmpty()) {
            throw new ConfigurationException(what + " " + path + " is readable by other users (" + PosixFilePermissions.toString(perms)
                    + "); refusing to use it. Fix: chmod 600 " + path);
        }
    }

    /** The gateway key in a private file: one line starting with svc_. */
    static String readGatewayKey(String file) {
        Path path = expandHome(file);
        assertPrivate(path, "Gateway key file");
        String key;
        try {
            key = Files.readString(path, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            throw new ConfigurationException("Gateway key file " + path + " cannot be read: " + e.getMessage());
        }
        if (!GATEWAY_KEY.matcher(key).matches()) {
            throw new ConfigurationException("Gateway key file " + path + " does not hold a gateway key (expected one line starting with svc_).");
        }
        return key;
    }

    /** Writes {@code content} to a new file of mode 0600; when another process made it first, its copy stays. */
    static void createExclusive(Path path, String content) {
        try {
            Files.createDirectories(path.getParent(), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            Path made = Files.createFile(path, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(made, content, StandardCharsets.UTF_8);
        } catch (FileAlreadyExistsException theirs) {
            // both use the one made first
        } catch (IOException e) {
            throw new ConfigurationException("Cannot create " + path + ": " + e.getMessage());
        }
    }
}
