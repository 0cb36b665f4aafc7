import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/*
 * DynamoDB Local's own main binds every interface and has no option to choose one, and the engine
 * checks no credentials: anything that reaches its port owns the table. This launcher (compiled
 * once by dynamodb-local-launcher.ts, run by dynamodb-local.ts with the engine's jar on the class
 * path) builds the server from the same command line, binds its Jetty connector to 127.0.0.1 before it starts,
 * and skips the telemetry the jar's main would configure (nothing here reaches beyond loopback).
 */
public class DynamoDbLocalLoopback {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    if (proxy == null) System.exit(1);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    int bound = 0;
    for (Connector connector : server.getConnectors()) {
      if (connector instanceof ServerConnector) {
        ((ServerConnector) connector).setHost("127.0.0.1");
        bound++;
      }
    }
    // A connector this launcher does not know would listen on every interface: refuse to start.
    if (bound == 0 || bound != server.getConnectors().length) {
      System.err.println("DynamoDB Local: could not bind its connectors to loopback");
      System.exit(1);
    }
    proxy.start();
    proxy.join();
  }
}
