package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.privacyrelay.engine.Engine;
import dev.privacyrelay.errors.ConfigurationException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;

/**
 * This device's attester key ({@code attester-key.json}, a P-256 private JWK) and stable-alias secret
 * ({@code alias-secret}, 32 base64url bytes) in the config directory shared with the other SDKs:
 * {@code PRIVACY_RELAY_CONFIG_DIR}, else {@code $XDG_CONFIG_HOME/privacy-relay}, else
 * {@code ~/.config/privacy-relay}. Made on first use (mode 0600), refused when readable by others.
 */
final class DeviceIdentity {
    final JsonNode privateJwk;
    final String aliasSecretHex;

    private DeviceIdentity(JsonNode privateJwk, String aliasSecretHex) {
        this.privateJwk = privateJwk;
        this.aliasSecretHex = aliasSecretHex;
    }

    static Path defaultDir() {
        String d = System.getenv("PRIVACY_RELAY_CONFIG_DIR");
        if (d != null && !d.isEmpty()) return PrivateFiles.expandHome(d);
        String xdg = System.getenv("XDG_CONFIG_HOME");
        if (xdg != null && !xdg.isEmpty()) return PrivateFiles.expandHome(xdg).resolve("privacy-relay");
        return Path.of(System.getProperty("user.home"), ".config", "privacy-relay");
    }

    static DeviceIdentity load(Path dir, Engine engine, ObjectMapper json) {
        Path keyPath = dir.resolve("attester-key.json");
        if (!Files.exists(keyPath)) {
            PrivateFiles.createExclusive(keyPath, engine.generateDeviceKey().get("private_jwk").toString() + "\n");
        }
        PrivateFiles.assertPrivate(keyPath, "Device attester key file");
        JsonNode jwk;
        try {
            jwk = json.readTree(Files.readString(keyPath, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new ConfigurationException("Device attester key file " + keyPath + " is not a JWK: " + e.getMessage() + "; move it away to generate a new one.");
        }
        Path secretPath = dir.resolve("alias-secret");
        if (!Files.exists(secretPath)) {
            byte[] fresh = new byte[32];
            new SecureRandom().nextBytes(fresh);
            PrivateFiles.createExclusive(secretPath, Base64.getUrlEncoder().withoutPadding().encodeToString(fresh) + "\n");
        }
        PrivateFiles.assertPrivate(secretPath, "Stable-alias secret file");
        byte[] secret;
        try {
            secret = Base64.getUrlDecoder().decode(Files.readString(secretPath, StandardCharsets.UTF_8).strip().replaceAll("=+$", ""));
        } catch (IOException | IllegalArgumentException e) {
            secret = new byte[0];
        }
        if (secret.length < 32) {
            throw new ConfigurationException("Stable-alias secret file " + secretPath + " does not hold 32 base64url bytes; move it away to generate a new one.");
        }
        return new DeviceIdentity(jwk, HexFormat.of().formatHex(secret));
    }
}
