package dev.privacyrelay;

import dev.privacyrelay.errors.ConfigurationException;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * The gateway-lock rule for the URL: https, or plain http only to a loopback host for
 * development; no credentials, query or fragment in it. Checked at construction, before anything is sent.
 */
final class GatewayUrl {
    private GatewayUrl() {}

    /** The base URL without a trailing slash, or a ConfigurationException saying why it is refused. */
    static String check(String raw) {
        if (raw == null || raw.isBlank()) {
            throw new ConfigurationException("The gateway URL is not set: give the base URL of your Privacy Relay gateway (https://...).");
        }
        URI u;
        try {
            u = new URI(raw.trim());
        } catch (URISyntaxException e) {
            throw new ConfigurationException("The gateway URL must be an https URL, not \"" + raw + "\".");
        }
        String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("https") && !scheme.equals("http") || u.getHost() == null) {
            throw new ConfigurationException("The gateway URL must be an https URL, not \"" + raw + "\".");
        }
        if (u.getRawUserInfo() != null) {
            throw new ConfigurationException("The gateway URL must not carry credentials; give the key with apiKey or apiKeyFile.");
        }
        if (u.getRawQuery() != null || u.getRawFragment() != null) {
            throw new ConfigurationException("The gateway URL must not have a query or fragment.");
        }
        if (scheme.equals("http") && !isLoopback(u.getHost())) {
            throw new ConfigurationException("Gateway URL " + raw + " is plain http to a non-loopback host; a gateway must be reached over https "
                    + "(plain http is allowed only to 127.0.0.1/localhost/[::1] for development). Nothing was sent.");
        }
        String path = u.getRawPath() == null ? "" : u.getRawPath().replaceAll("/+$", "");
        return scheme + "://" + u.getRawAuthority() + path;
    }

    /** localhost, *.localhost, 127.0.0.0/8 and ::1, by their text: no name is resolved. */
    static boolean isLoopback(String host) {
        String h = host.toLowerCase(Locale.ROOT);
        if (h.startsWith("[") && h.endsWith("]")) h = h.substring(1, h.length() - 1);
        if (h.equals("localhost") || h.endsWith(".localhost")) return true;
        if (h.matches("\\d{1,3}(\\.\\d{1,3}){3}") || h.contains(":")) {
            try {
                return InetAddress.getByName(h).isLoopbackAddress(); // a literal address: parsed, not looked up
            } catch (java.net.UnknownHostException e) {
                return false;
            }
        }
        return false;
    }
}
